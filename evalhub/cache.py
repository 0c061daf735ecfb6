"""Django's Redis cache, with one redis-py client per connection pool instead of one per
command.

Django's RedisCacheClient builds a new ``redis.Redis`` for every cache call, and redis-py's
constructor fills a table of some two hundred response callbacks each time: with sessions
in the cache that is two or three clients per page a crowdworker loads, a few percent of a
judgment's CPU. A client holds no per-command state (connections come from the pool, which
is thread-safe), so one per pool serves every call.
"""

from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.cache.backends.redis import RedisCacheClient as DjangoRedisCacheClient


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
