"""Rate limits (evalhub/ratelimit.py): a fixed window per key in the shared cache; with Redis
down each caller's declared choice holds (fail open: allowed uncounted; fail closed: refused
with 503), with a warning. On a private Redis stopped mid-test."""

import logging

import pytest

from evalhub.ratelimit import LimitUnavailable, Outage, allow_key


def test_a_limit_counts_per_key_in_redis(redis_cache):
    answers = [allow_key("probe:a", 2, 60, on_outage=Outage.FAIL_CLOSED) for _ in range(3)]
    assert answers == [True, True, False]
    assert allow_key("probe:b", 2, 60, on_outage=Outage.FAIL_CLOSED) is True


def test_a_limit_that_fails_open_allows_uncounted_while_redis_is_down(redis_cache, caplog):
    redis_cache.stop()
    with caplog.at_level(logging.WARNING, logger="evalhub.cache"):
        answers = [allow_key("chat:7", 1, 60, on_outage=Outage.FAIL_OPEN) for _ in range(3)]
    assert answers == [True, True, True]
    assert "down for the chat limit: requests are allowed uncounted" in caplog.text


def test_a_limit_that_fails_closed_refuses_while_redis_is_down(redis_cache, caplog):
    redis_cache.stop()
    with (
        caplog.at_level(logging.WARNING, logger="evalhub.cache"),
        pytest.raises(LimitUnavailable, match="try again in a few minutes"),
    ):
        allow_key("new-worker:203.0.113.7", 10, 3600, on_outage=Outage.FAIL_CLOSED)
    assert "down for the new-worker limit: requests are refused with 503" in caplog.text


def test_with_redis_back_limits_count_again(redis_cache):
    redis_cache.stop()
    redis_cache.start()
    answers = [allow_key("signup:x", 1, 60, on_outage=Outage.FAIL_CLOSED) for _ in range(2)]
    assert answers == [True, False]


def test_every_caller_declares_what_an_outage_means():
    with pytest.raises(TypeError):
        allow_key("probe:c", 1, 60)
