"""The Redis cache backend (evalhub/cache.py) reuses one redis-py client per pool."""

from evalhub.cache import RedisCache


def test_every_cache_call_gets_the_same_client_of_its_pool():
    # Building clients connects to nothing: no Redis server is needed here.
    cache = RedisCache("redis://127.0.0.1:6379/0", {})
    first = cache._cache.get_client("a")
    assert cache._cache.get_client("b") is first
    assert cache._cache.get_client("c", write=True) is first  # one server: one pool
    assert first.connection_pool is cache._cache._get_connection_pool(write=False)


def test_each_server_pool_has_its_own_client():
    # With two servers Django writes to the first and reads from the other.
    cache = RedisCache("redis://127.0.0.1:6379/0,redis://127.0.0.1:6380/0", {})
    writer = cache._cache.get_client(write=True)
    readers = {id(cache._cache.get_client()) for _ in range(5)}
    assert len(readers) == 1 and id(writer) not in readers


def test_a_redis_error_is_told_apart_without_importing_redis_py_first():
    from redis.exceptions import ConnectionError as RedisConnectionError

    from evalhub.cache import is_redis_failure

    assert is_redis_failure(RedisConnectionError("refused"))
    assert not is_redis_failure(ConnectionError("another library's"))
    assert not is_redis_failure(ValueError("a bug"))
