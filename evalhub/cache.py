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

from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.cache.backends.redis import RedisCacheClient as DjangoRedisCacheClient
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)

# What a cache call raises when Redis cannot serve it: unreachable, timed out, out of memory,
# read-only. (The embedded mode's local-memory cache raises none of these.)
CACHE_DOWN = (RedisError,)

WARNING_INTERVAL_SECONDS = 60.0
_last_warning: dict[str, float] = {}


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


def warn_cache_down(use: str, consequence: str, error: Exception) -> None:
    """Log that the cache failed `use`, and what happens instead; once a minute per use and
    process, since during an outage every request would write the same line."""
    now = time.monotonic()
    if now - _last_warning.get(use, -WARNING_INTERVAL_SECONDS) < WARNING_INTERVAL_SECONDS:
        return
    _last_warning[use] = now
    logger.warning("The cache (Redis) is down for %s: %s. %s", use, consequence, error)


class Degrading:
    """A cache whose failures read as misses: a get that fails returns the default, a set or
    a delete that fails is skipped, `key in cache` is False; each logs a warning. For data
    whose cached copy only saves a database query (sessions)."""

    def __init__(self, cache, use: str, consequence: str):
        self._cache = cache
        self._use = use
        self._consequence = consequence

    def _call(self, method, *args, failed=None, **kwargs):
        try:
            return method(*args, **kwargs)
        except CACHE_DOWN as error:
            warn_cache_down(self._use, self._consequence, error)
            return failed

    async def _acall(self, method, *args, failed=None, **kwargs):
        try:
            return await method(*args, **kwargs)
        except CACHE_DOWN as error:
            warn_cache_down(self._use, self._consequence, error)
            return failed

    def get(self, key, default=None, **kwargs):
        return self._call(self._cache.get, key, default, failed=default, **kwargs)

    def set(self, key, value, *args, **kwargs):
        return self._call(self._cache.set, key, value, *args, **kwargs)

    def delete(self, key, **kwargs):
        return self._call(self._cache.delete, key, failed=False, **kwargs)

    def has_key(self, key, **kwargs):
        return self._call(self._cache.has_key, key, failed=False, **kwargs)

    def __contains__(self, key):
        return self.has_key(key)

    async def aget(self, key, default=None, **kwargs):
        return await self._acall(self._cache.aget, key, default, failed=default, **kwargs)

    async def aset(self, key, value, *args, **kwargs):
        return await self._acall(self._cache.aset, key, value, *args, **kwargs)

    async def adelete(self, key, **kwargs):
        return await self._acall(self._cache.adelete, key, failed=False, **kwargs)

    def __str__(self):
        return str(self._cache)
