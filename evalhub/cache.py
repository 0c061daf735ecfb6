"""Django's Redis cache, with one redis-py client per connection pool instead of one per
command; and what the cache's users do when Redis is down.

Django's RedisCacheClient builds a new ``redis.Redis`` for every cache call, and redis-py's
constructor fills a table of some two hundred response callbacks each time: with sessions
in the cache that is two or three clients per page a crowdworker loads, a few percent of a
judgment's CPU. A client holds no per-command state (connections come from the pool, which
is thread-safe), so one per pool serves every call.

Redis down: each use of the cache decides what that means (docs/production.md, "When Redis
is down"). Sessions read and write the database alone (evalhub/sessions.py, through
`Degrading`); rate limits fail open or closed as each caller declares
(evalhub/ratelimit.py). Either way a warning is logged, at most once a minute per use.
"""

import logging
import time

from asgiref.sync import sync_to_async
from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.cache.backends.redis import RedisCacheClient as DjangoRedisCacheClient

logger = logging.getLogger(__name__)

WARNING_INTERVAL_SECONDS = 60.0
_last_warning: dict[str, float] = {}


class CacheDown(Exception):
    """Redis failed a call of the cache."""


class RedisCacheClient(DjangoRedisCacheClient):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._clients = {}

    def get_client(self, key=None, *, write=False):
        pool = self._get_connection_pool(write)
        client = self._clients.get(id(pool))
        if client is None:
            client = self._clients[id(pool)] = self._client(connection_pool=pool)
        return client


class RedisCache(DjangoRedisCache):
    def __init__(self, server, params):
        super().__init__(server, params)
        self._class = RedisCacheClient


def call(use: str, consequence: str, method, *args, **kwargs):
    """``method(*args, **kwargs)``, a call on the cache for `use`, raising `CacheDown` when
    Redis fails it; `consequence` says what `use` does then, for the warning."""
    try:
        return method(*args, **kwargs)
    except Exception as error:
        if not is_redis_failure(error):
            raise
        _warn(use, consequence, error)
        raise CacheDown(use) from error


def is_redis_failure(error: BaseException) -> bool:
    """Whether `error` is what a cache call raises when Redis cannot serve it (unreachable,
    timed out, out of memory, read-only: a redis-py RedisError). Told by its class, so that
    no process imports redis-py (0.13 s) before it talks to Redis: the embedded mode's
    local-memory cache never does."""
    return any(
        cls.__name__ == "RedisError" and cls.__module__ == "redis.exceptions"
        for cls in type(error).__mro__
    )


def _warn(use: str, consequence: str, error: Exception) -> None:
    """Once a minute per use and process: during an outage every request would log it."""
    now = time.monotonic()
    if now - _last_warning.get(use, -WARNING_INTERVAL_SECONDS) < WARNING_INTERVAL_SECONDS:
        return
    _last_warning[use] = now
    logger.warning("The cache (Redis) is down for %s: %s. %s", use, consequence, error)


class Degrading:
    """A cache whose failures read as misses: a get that fails returns the default, a set or
    a delete that fails is skipped, `key in cache` is False; each logs a warning. After one
    failure it asks Redis nothing more, so a Redis that hangs costs its user one timeout.
    For data whose cached copy only saves a database query: one per session store, which
    lives for one request (evalhub/sessions.py). `longest` caps how long a copy is kept."""

    def __init__(self, cache, use: str, consequence: str, *, longest: int):
        self._cache = cache
        self._use = use
        self._consequence = consequence
        self._longest = longest
        self._down = False

    def _call(self, method, *args, failed=None, **kwargs):
        if self._down:
            return failed
        try:
            return call(self._use, self._consequence, method, *args, **kwargs)
        except CacheDown:
            self._down = True
            return failed

    def get(self, key, default=None, **kwargs):
        return self._call(self._cache.get, key, default, failed=default, **kwargs)

    def set(self, key, value, timeout, **kwargs):
        timeout = self._longest if timeout is None else min(timeout, self._longest)
        return self._call(self._cache.set, key, value, timeout, **kwargs)

    def delete(self, key, **kwargs):
        return self._call(self._cache.delete, key, failed=False, **kwargs)

    def has_key(self, key, **kwargs):
        return self._call(self._cache.has_key, key, failed=False, **kwargs)

    def __contains__(self, key):
        return self.has_key(key)

    # Django's Redis backend runs its async methods as the sync ones in a thread, too.
    async def aget(self, key, default=None, **kwargs):
        return await sync_to_async(self.get)(key, default, **kwargs)

    async def aset(self, key, value, timeout, **kwargs):
        return await sync_to_async(self.set)(key, value, timeout, **kwargs)

    async def adelete(self, key, **kwargs):
        return await sync_to_async(self.delete)(key, **kwargs)

    def __str__(self):
        return str(self._cache)
