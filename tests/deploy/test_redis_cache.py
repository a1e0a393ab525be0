"""The Redis cache backend of a deployment (REDIS_URL set): Django's, with one redis-py client
per connection pool instead of one per call. It needs Redis on REDIS_URL (127.0.0.1:6379 by
default), as the production-topology test does."""

from __future__ import annotations

import multiprocessing
import os
import uuid

import pytest
import redis

from ocm_site.redis_cache import RedisCache

URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")


@pytest.fixture
def cache():
    redis.Redis.from_url(URL).ping()
    backend = RedisCache(URL, {"KEY_PREFIX": f"test-{uuid.uuid4().hex}"})
    yield backend
    backend.clear()
    backend.close()


def test_it_is_a_working_django_cache(cache):
    cache.set("a", {"messages": [1, 2]}, 30)
    assert cache.get("a") == {"messages": [1, 2]}
    assert cache.add("a", "other") is False
    cache.set_many({"b": 1, "c": 2})
    assert cache.get_many(["a", "b", "c", "d"]) == {"a": {"messages": [1, 2]}, "b": 1, "c": 2}
    assert cache.incr("b") == 2
    cache.delete("a")
    assert cache.get("a", "gone") == "gone"


def test_every_call_uses_the_same_client(cache):
    client = cache._cache.get_client("a")
    cache.set("a", 1)
    cache.get("a")
    assert cache._cache.get_client("b", write=True) is client


def _child_round_trip(cache: RedisCache, done) -> None:
    done.put(cache.get("from-parent"))
    cache.set("from-child", "hello")


def test_a_forked_worker_uses_the_client_it_inherited(cache):
    """gunicorn forks its web workers: a client made before the fork must work after it."""
    cache.set("from-parent", "hi")  # the client and a pooled connection exist before the fork
    context = multiprocessing.get_context("fork")
    done = context.Queue()
    child = context.Process(target=_child_round_trip, args=(cache, done))
    child.start()
    assert done.get(timeout=20) == "hi"
    child.join(timeout=20)
    assert child.exitcode == 0
    assert cache.get("from-child") == "hello"
    assert cache.get("from-parent") == "hi"  # the parent's connection was left alone
