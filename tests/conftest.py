"""Shared fixtures and the rules for tests that need real services.

- Celery runs eagerly in every test except those marked `integration`, which go through
  the real broker and worker that CI starts (and fail, never skip, when CI says so).
- Tests marked `postgres` skip with a reason on SQLite, and fail instead when
  EVALHUB_REQUIRE_POSTGRES is set (CI).
- `private_redis` starts a Redis of the test's own (never the shared one), which a test may
  stop mid-test; without redis-server it skips, or fails when EVALHUB_REQUIRE_SERVICES is set.
- With EVALHUB_USE_EXISTING_DB set (CI's PostgreSQL run), the tests use the database named
  by DATABASE_URL as it is, migrated, so that a Celery worker process started outside
  pytest sees the same rows.
"""

import os

import pytest
from django.core.cache import cache
from django.core.management import call_command
from django.db import connection
from hypothesis import settings as hypothesis_settings

from evalhub.celery import app as celery_app
from tests.services import private_redis_server


def env_flag(name: str) -> bool:
    return os.environ.get(name, "").lower() in {"1", "true", "yes"}


# No per-example deadline: a busy 2-core CI machine must not turn slowness into failures.
# In CI the examples are derandomised, so a run is reproducible; locally they explore.
hypothesis_settings.register_profile("dev", deadline=None)
hypothesis_settings.register_profile("ci", deadline=None, derandomize=True, print_blob=True)
hypothesis_settings.load_profile("ci" if os.environ.get("CI") else "dev")


if env_flag("EVALHUB_USE_EXISTING_DB"):

    @pytest.fixture(scope="session")
    def django_db_setup(django_db_blocker):
        with django_db_blocker.unblock():
            call_command("migrate", interactive=False, verbosity=0)


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix, tmp_path_factory):
    """On SQLite the test database is a file, as `make run`'s is, not Django's shared-cache
    memory database: the live server's request threads then have connections of their own
    that wait for a writer (WAL, a busy timeout), where a shared cache's table locks fail
    at once ("database table is locked") whenever a page polls while the test writes."""
    from django.conf import settings

    database = settings.DATABASES["default"]
    if database["ENGINE"] != "django.db.backends.sqlite3":
        return
    database.setdefault("TEST", {})["NAME"] = str(tmp_path_factory.mktemp("db") / "test.sqlite3")
    # Nothing to keep across a crash: commits need not wait for the disk.
    options = database.setdefault("OPTIONS", {})
    options["init_command"] = options.get("init_command", "") + "PRAGMA synchronous=OFF;"


@pytest.fixture(autouse=True)
def _fast_test_settings(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    # Real hashing costs a quarter of a second per user; tests create hundreds.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    # Fake bots and judges listen on 127.0.0.1 (any port): the operator's allow-list of
    # internal destinations names it; the address-policy tests empty it again.
    settings.EVALHUB_OUTBOUND_ALLOW = ["127.0.0.1"]
    # The test client's login() authenticates without a request, which django-axes refuses;
    # the lockout tests (tests/evalhub/test_health_and_headers.py) turn it back on.
    settings.AXES_ENABLED = False
    # Tests start many workers from one address (127.0.0.1); the tests of these limits
    # (tests/annotation/test_entry.py) set their own.
    settings.EVALHUB_NEW_WORKERS_PER_ADDRESS_PER_HOUR = 10_000
    settings.EVALHUB_NEW_WORKERS_PER_CAMPAIGN_PER_MINUTE = 10_000
    # The API's throttles (evalhub/api/throttles.py) at rates no test reaches; the tests of
    # the throttles (tests/evalhub/test_api_throttles.py) set their own.
    rates = settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": dict.fromkeys(rates, "1000000/second"),
    }
    # Rate-limit counters live in the cache; each test starts with none.
    cache.clear()


@pytest.fixture
def private_redis(tmp_path):
    """A Redis of the test's own on a free port (tests/services.py), stopped at the end; the
    test may stop it and start it again. Skips with a reason without redis-server, and fails
    instead when EVALHUB_REQUIRE_SERVICES is set (CI)."""
    server = private_redis_server(tmp_path)
    yield server
    server.stop()


@pytest.fixture
def redis_cache(settings, private_redis, monkeypatch):
    """The production shape of the cache and sessions, on the test's private Redis."""
    # Outage warnings are logged once a minute per use; each test sees its own.
    monkeypatch.setattr("evalhub.cache._last_warning", {})
    settings.CACHES = {
        "default": {
            "BACKEND": "evalhub.cache.RedisCache",
            "LOCATION": private_redis.url,
            "OPTIONS": settings.EVALHUB_REDIS_CACHE_OPTIONS,
        }
    }
    settings.SESSION_ENGINE = "evalhub.sessions"
    return private_redis


@pytest.fixture(autouse=True)
def _stream_database_calls(request, monkeypatch):
    """A stream's database calls (endpoints/dbcalls.py) share the test's connection unless
    the test commits its rows (transaction=True), as the pool's own connections need."""
    from endpoints import dbcalls

    marker = request.node.get_closest_marker("django_db")
    committed = marker is not None and marker.kwargs.get("transaction", False)
    monkeypatch.setattr(dbcalls, "POOLED", committed)


@pytest.fixture(autouse=True)
def _celery_mode(request, settings):
    """Eager Celery for unit tests; the real broker only for `integration` tests. The setting
    says so too: code asking whether workers exist (analysis/runs/stability.py) reads it,
    and CI's real-service run has a broker configured."""
    eager = request.node.get_closest_marker("integration") is None
    # Read first: Celery loads its configuration from the settings on first use, and must
    # not take this test's override for the session's.
    previous = celery_app.conf.task_always_eager
    if eager:
        settings.CELERY_TASK_ALWAYS_EAGER = True
    celery_app.conf.task_always_eager = eager or previous
    yield
    celery_app.conf.task_always_eager = previous


@pytest.fixture(autouse=True)
def _postgres_only(request):
    if request.node.get_closest_marker("postgres") is None:
        return
    if connection.vendor == "postgresql":
        return
    reason = f"needs PostgreSQL (row locks, concurrency); the database here is {connection.vendor}"
    if env_flag("EVALHUB_REQUIRE_POSTGRES"):
        pytest.fail(f"EVALHUB_REQUIRE_POSTGRES is set but this test {reason}")
    pytest.skip(reason)


def pytest_collection_modifyitems(config, items):
    """Browser tests run last. Playwright's sync API, once started (a session fixture), leaves
    its event loop set as the running loop of the main thread, and `asyncio.run` refuses to
    start inside a running loop: the async tests (tests/endpoints/test_streaming.py) must
    run before the first browser test."""
    items.sort(key=lambda item: "tests/browser/" in item.nodeid.replace("\\", "/"))
