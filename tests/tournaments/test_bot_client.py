"""The bot endpoint client against real HTTP servers on 127.0.0.1: protocol, typed errors,
retries with backoff, and the per-endpoint concurrency limit (local and Redis)."""

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from django.conf import settings as django_settings

from tests.services import required
from tests.tournaments import bots
from tournaments.bot_client import (
    MAX_REPLY_BYTES,
    BotBadJSON,
    BotBadReply,
    BotBusy,
    BotClient,
    BotError,
    BotHTTPError,
    BotTimeout,
    BotUnreachable,
    Endpoint,
    LimiterUnavailable,
    LocalLimiter,
    RedisLimiter,
    RetryPolicy,
    default_limiter,
)

ROOT = Path(__file__).resolve().parents[2]
TURNS = [{"speaker": 0, "text": "hello"}, {"speaker": 1, "text": "hi there"}]
FAST = RetryPolicy(attempts=3, base_delay=0.001, max_delay=0.004, jitter=False)


@pytest.fixture
def serve():
    with bots.BotPool() as pool:
        yield pool.start


def client(server, *, timeout=2.0, token="", limit=2, retry=FAST, limiter=None, **options):
    endpoint = Endpoint(f"test-{id(server)}-{limit}", server.url, token, timeout, limit)
    return BotClient(endpoint, retry=retry, limiter=limiter or LocalLimiter(), **options)


def test_it_sends_the_protocol_and_returns_the_text(serve):
    server = serve(bots.counting)
    assert client(server, token="s3cret").reply("cup/a--b--0", TURNS, 0) == "count 2 as 0"
    assert server.requests == [{"conversation_id": "cup/a--b--0", "turns": TURNS, "speaker": 0}]
    headers = server.headers[0]
    assert headers["Authorization"] == "Bearer s3cret"
    assert headers["Content-Type"] == "application/json"


def test_no_token_sends_no_authorization(serve):
    server = serve(bots.echo)
    assert client(server).reply("c", TURNS, 1) == "echo: hi there"
    assert "Authorization" not in server.headers[0]


@pytest.mark.parametrize(
    "failure",
    [bots.SERVER_ERROR, bots.BAD_JSON, bots.too_slow(0.4), bots.Reply(429, b"slow down")],
    ids=["http-500", "bad-json", "timeout", "http-429"],
)
def test_a_transient_failure_is_retried_after_a_backoff(serve, failure):
    server = serve(bots.fail_first(bots.counting, failure))
    sleeps = []
    bot = client(server, timeout=0.15, sleep=sleeps.append)
    assert bot.reply("c", TURNS, 1) == "count 2 as 1"
    assert len(server.requests) == 2
    assert sleeps == [0.001]


def test_it_gives_up_after_the_configured_attempts_with_exponential_backoff(serve):
    server = serve(bots.always(503))
    sleeps = []
    retry = RetryPolicy(attempts=4, base_delay=0.01, max_delay=0.025, jitter=False)
    with pytest.raises(BotHTTPError) as caught:
        client(server, retry=retry, sleep=sleeps.append).reply("c", TURNS, 0)
    assert sleeps == [0.01, 0.02, 0.025]
    assert len(server.requests) == 4
    error = caught.value
    assert error.status == 503 and error.transient and error.attempts == 4
    assert str(error) == f"{server.url}: answered HTTP 503: broken (gave up after 4 attempts)"


def test_jitter_keeps_the_delay_between_half_and_all_of_the_backoff():
    policy = RetryPolicy(attempts=5, base_delay=0.1, max_delay=10)
    delays = [policy.delay(3) for _ in range(200)]
    assert all(0.2 <= d <= 0.4 for d in delays)
    assert len(set(delays)) > 1


def test_the_retry_policy_comes_from_settings(settings):
    settings.EVALHUB_BOT_RETRY_ATTEMPTS = 7
    settings.EVALHUB_BOT_RETRY_BASE_DELAY = 0.25
    policy = RetryPolicy.from_settings()
    assert (policy.attempts, policy.base_delay) == (7, 0.25)


def test_a_client_error_is_not_retried(serve):
    server = serve(bots.always(404))
    with pytest.raises(BotHTTPError, match="answered HTTP 404: broken$") as caught:
        client(server).reply("c", TURNS, 0)
    assert caught.value.status == 404 and not caught.value.transient
    assert len(server.requests) == 1


def test_redirects_are_refused_not_followed(serve):
    target = serve(bots.counting)
    server = serve(lambda payload: bots.Reply(302, b"", headers=(("Location", target.url),)))
    with pytest.raises(BotHTTPError, match="HTTP 302 \\(redirects are not followed\\)"):
        client(server).reply("c", TURNS, 0)
    assert target.requests == []


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"text": ""}, '"text" is empty'),
        ({"text": "   "}, '"text" is empty'),
        ({"text": 5}, '"text" must be a string, not int'),
        ({"reply": "hello"}, 'the reply has no "text"'),
        (["hello"], 'the reply has no "text"'),
        ({"text": "x" * 51}, '"text" has 51 characters; the limit is 50'),
    ],
)
def test_a_reply_that_breaks_the_protocol_is_refused_at_once(serve, body, message):
    server = serve(lambda payload: bots.Reply(200, json.dumps(body).encode()))
    with pytest.raises(BotBadReply, match=message) as caught:
        client(server, max_reply_chars=50).reply("c", TURNS, 0)
    assert not caught.value.transient
    assert len(server.requests) == 1


def test_an_oversized_reply_is_refused(serve):
    huge = json.dumps({"text": "y" * (MAX_REPLY_BYTES + 10)}).encode()
    server = serve(lambda payload: bots.Reply(200, huge))
    with pytest.raises(BotBadReply, match=f"larger than {MAX_REPLY_BYTES} bytes"):
        client(server).reply("c", TURNS, 0)


def test_the_text_is_stripped(serve):
    server = serve(lambda payload: bots.text("  spaced out \n"))
    assert client(server).reply("c", TURNS, 0) == "spaced out"


def test_bad_json_is_a_typed_error_after_the_retries(serve):
    server = serve(lambda payload: bots.BAD_JSON)
    with pytest.raises(BotBadJSON, match="the reply is not JSON: '<html>proxy error</html>'"):
        client(server).reply("c", TURNS, 0)
    assert len(server.requests) == 3


def test_a_slow_bot_times_out(serve):
    server = serve(lambda payload: bots.too_slow(0.5))
    with pytest.raises(BotTimeout, match="no reply within 0.1 s") as caught:
        client(server, timeout=0.1, retry=RetryPolicy(attempts=1)).reply("c", TURNS, 0)
    assert caught.value.transient


def test_an_endpoint_nobody_listens_on_is_unreachable(serve):
    server = serve(bots.echo)
    server.stop()
    with pytest.raises(BotUnreachable, match="cannot connect") as caught:
        client(server).reply("c", TURNS, 0)
    assert caught.value.attempts == 3


def test_only_http_endpoints_are_accepted():
    with pytest.raises(BotError, match="only http and https endpoints are supported"):
        BotClient(Endpoint("k", "ftp://example.org/bot"), limiter=LocalLimiter())


# Concurrency ----------------------------------------------------------------------------


def hammer(make_client, n_threads: int = 6, requests_each: int = 2) -> list:
    """Requests from several threads at once; the errors raised, if any."""
    barrier = threading.Barrier(n_threads)
    errors = []

    def run():
        bot = make_client()
        barrier.wait()
        try:
            for i in range(requests_each):
                bot.reply(f"c{threading.get_ident()}-{i}", TURNS, 0)
        except Exception as error:
            errors.append(error)

    threads = [threading.Thread(target=run) for _ in range(n_threads)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors


@pytest.mark.parametrize(("limit", "expected"), [(1, 1), (3, 3)])
def test_the_local_limit_caps_requests_in_flight(serve, limit, expected):
    server = serve(bots.slow(bots.counting, 0.04))
    limiter = LocalLimiter()
    errors = hammer(lambda: client(server, limit=limit, limiter=limiter))
    assert errors == []
    assert len(server.requests) == 12
    assert server.max_in_flight == expected


def test_waiting_too_long_for_a_slot_is_busy(serve):
    server = serve(bots.counting)
    limiter = LocalLimiter()
    bot = client(server, limit=1, limiter=limiter, slot_wait=0.05)
    held = limiter.slot(bot.endpoint.key, 1, wait=1, lease=10)
    with held, pytest.raises(BotBusy, match="no free slot among 1") as caught:
        bot.reply("c", TURNS, 0)
    assert caught.value.attempts == 1  # not retried: it already waited
    assert server.requests == []
    assert bot.reply("c", TURNS, 0) == "count 2 as 0"  # the slot is back


def test_the_default_limiter_follows_the_broker(settings):
    settings.CELERY_BROKER_URL = ""
    assert isinstance(default_limiter(), LocalLimiter)
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/3"
    limiter = default_limiter()
    assert isinstance(limiter, RedisLimiter) and default_limiter() is limiter


def test_an_unreachable_redis_is_a_typed_error(serve):
    server = serve(bots.counting)
    limiter = RedisLimiter.from_url("redis://127.0.0.1:1/0")
    with pytest.raises(LimiterUnavailable, match="the Redis concurrency limiter failed"):
        client(server, limiter=limiter, retry=RetryPolicy(attempts=1)).reply("c", TURNS, 0)
    assert server.requests == []


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory):
    """The CI broker when it is Redis, else a throwaway redis-server on a unix socket."""
    broker = django_settings.CELERY_BROKER_URL or ""
    if broker.startswith(("redis://", "rediss://")):
        yield broker
        return
    binary = shutil.which("redis-server")
    if binary is None:
        message = "needs Redis: a redis:// CELERY_BROKER_URL or redis-server on the PATH"
        if required("EVALHUB_REQUIRE_SERVICES"):
            pytest.fail(f"EVALHUB_REQUIRE_SERVICES is set but this test {message}")
        pytest.skip(message)
    # Unix sockets have a short path limit; tmp_path_factory's paths can be too long.
    socket = Path(f"/tmp/evalhub-test-redis-{os.getpid()}.sock")
    process = subprocess.Popen(
        [binary, "--port", "0", "--unixsocket", str(socket), "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )
    url = f"unix://{socket}"
    limiter = RedisLimiter.from_url(url)
    deadline = time.monotonic() + 5
    while True:
        try:
            limiter.client.ping()
            break
        except Exception:
            if time.monotonic() > deadline:
                process.kill()
                pytest.fail("redis-server did not start within 5 s")
            time.sleep(0.02)
    yield url
    process.terminate()
    process.wait(timeout=5)


def test_the_redis_limit_is_shared_by_separate_connections(serve, redis_url):
    server = serve(bots.slow(bots.counting, 0.04))
    # One RedisLimiter (connection pool) per thread: only Redis is shared, as between
    # worker processes.
    errors = hammer(lambda: client(server, limit=1, limiter=RedisLimiter.from_url(redis_url)))
    assert errors == []
    assert len(server.requests) == 12
    assert server.max_in_flight == 1


def test_the_redis_limit_holds_across_processes(serve, redis_url):
    server = serve(bots.slow(bots.counting, 0.03))
    script = f"""
from tournaments.bot_client import BotClient, Endpoint, RedisLimiter, RetryPolicy
bot = BotClient(
    Endpoint("cross-process", {server.url!r}, "", 2.0, 1),
    retry=RetryPolicy(attempts=1), limiter=RedisLimiter.from_url({redis_url!r}),
    max_reply_chars=100, slot_wait=10,
)
for i in range(4):
    bot.reply("p", [{{"speaker": 0, "text": "hi"}}], 1)
"""
    processes = [
        subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, stderr=subprocess.PIPE)
        for _ in range(3)
    ]
    for process in processes:
        _, stderr = process.communicate(timeout=30)
        assert process.returncode == 0, stderr.decode()
    assert len(server.requests) == 12
    assert server.max_in_flight == 1


def test_a_redis_lease_expires_when_its_holder_dies(redis_url):
    limiter = RedisLimiter.from_url(redis_url)
    key = f"lease-test-{os.getpid()}-{time.monotonic_ns()}"
    crashed = limiter.slot(key, 1, wait=1, lease=0.2)
    crashed.__enter__()  # a worker killed mid-request never releases its slot
    with pytest.raises(BotBusy), limiter.slot(key, 1, wait=0.05, lease=0.2):
        pass
    time.sleep(0.25)
    with limiter.slot(key, 1, wait=0.05, lease=0.2):
        assert limiter.client.zcard(RedisLimiter.prefix + key) == 1
    assert limiter.client.zcard(RedisLimiter.prefix + key) == 0
