"""Sessions with Redis down (evalhub/sessions.py): read from and written to the database
alone, with a warning; shown on a private Redis stopped mid-test."""

import logging

import pytest
import redis
from django.contrib.sessions.models import Session
from django.core.cache import cache

from evalhub.sessions import COPY_SECONDS, SessionStore

pytestmark = pytest.mark.django_db

DOWN = "The cache (Redis) is down for sessions"


def test_a_session_saved_before_the_outage_is_read_from_the_database(redis_cache, caplog):
    store = SessionStore()
    store["worker"] = "w1"
    store.save()
    redis_cache.stop()
    with caplog.at_level(logging.WARNING, logger="evalhub.cache"):
        assert SessionStore(store.session_key)["worker"] == "w1"
    assert DOWN in caplog.text


def test_sessions_are_created_changed_cycled_and_deleted_while_redis_is_down(redis_cache):
    redis_cache.stop()
    store = SessionStore()
    store["worker"] = "w1"
    store.save()
    first_key = store.session_key
    store.cycle_key()  # as a login or a new worker identity does
    store["user"] = "ann"
    store.save()
    assert not Session.objects.filter(session_key=first_key).exists()
    assert SessionStore(store.session_key).load() == {"worker": "w1", "user": "ann"}
    store.flush()  # a logout
    assert not Session.objects.exists()


def test_the_outage_is_logged_once_a_minute_not_once_a_request(redis_cache, caplog):
    redis_cache.stop()
    with caplog.at_level(logging.WARNING, logger="evalhub.cache"):
        for _ in range(5):
            SessionStore().save()
    assert caplog.text.count(DOWN) == 1
    assert Session.objects.count() == 5


def test_a_copy_in_the_cache_is_kept_ten_minutes_at_most(redis_cache, settings):
    settings.SESSION_COOKIE_AGE = 14 * 24 * 3600
    store = SessionStore()
    store["worker"] = "w1"
    store.save()
    ttl = redis.Redis.from_url(redis_cache.url).ttl(cache.make_key(store.cache_key))
    assert 0 < ttl <= COPY_SECONDS == 600
    assert store.get_expiry_age() == 14 * 24 * 3600  # the session itself lasts as long


def test_with_redis_back_sessions_are_cached_again(redis_cache):
    redis_cache.stop()
    store = SessionStore()
    store["worker"] = "w1"
    store.save()
    redis_cache.start()
    assert SessionStore(store.session_key)["worker"] == "w1"  # from the database, cached
    Session.objects.all().delete()
    assert SessionStore(store.session_key)["worker"] == "w1"  # from the cache
