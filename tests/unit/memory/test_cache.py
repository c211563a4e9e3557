from __future__ import annotations

from pallas.core.clock import FakeClock
from pallas.features.memory.cache import TtlLruCache, query_cache_key


def test_entries_expire_after_ttl() -> None:
    clock = FakeClock()
    cache: TtlLruCache[str] = TtlLruCache(clock, ttl_seconds=300, max_entries=8)
    key = query_cache_key("group:1:2", "group_memory", "小明喜欢什么？")
    cache.put(key, "result")
    clock.advance(299)
    assert cache.get(key) == "result"
    clock.advance(1)
    assert cache.get(key) is None
    assert cache.stats.expired == 1 and len(cache) == 0


def test_key_normalises_query_and_scope_sets() -> None:
    a = query_cache_key({"pool:x", "group:1:2"}, "group_memory", "  小明喜欢什么？？ ")
    b = query_cache_key(["group:1:2", "pool:x"], "group_memory", "小明喜欢什么")
    assert a == b
    assert a != query_cache_key("group:1:3", "group_memory", "小明喜欢什么")
    assert a != query_cache_key(["group:1:2", "pool:x"], "person_facts", "小明喜欢什么")


def test_lru_eviction_keeps_recently_used() -> None:
    clock = FakeClock()
    cache: TtlLruCache[int] = TtlLruCache(clock, ttl_seconds=60, max_entries=2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # a is now most recent
    cache.put("c", 3)
    assert cache.get("b") is None
    assert cache.get("a") == 1 and cache.get("c") == 3
    assert cache.stats.evicted == 1


def test_get_or_compute_and_scope_invalidation() -> None:
    clock = FakeClock()
    cache: TtlLruCache[str] = TtlLruCache(clock)
    calls: list[int] = []

    def compute() -> str:
        calls.append(1)
        return "fresh"

    key = query_cache_key(["group:1:2", "pool:x"], "group_memory", "q")
    other = query_cache_key("group:1:3", "group_memory", "q")
    assert cache.get_or_compute(key, compute) == "fresh"
    assert cache.get_or_compute(key, compute) == "fresh"
    assert len(calls) == 1
    cache.put(other, "other")
    assert cache.invalidate_scope("pool:x") == 1
    assert cache.get(key) is None and cache.get(other) == "other"


def test_zero_ttl_disables_caching() -> None:
    cache: TtlLruCache[str] = TtlLruCache(FakeClock(), ttl_seconds=0)
    cache.put("k", "v")
    assert cache.get("k") is None
