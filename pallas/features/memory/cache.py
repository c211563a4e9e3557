"""A small TTL + LRU cache for retrieval results, keyed by (scope, kind, normalised query).

Identical queries within the TTL (5 minutes by default) are served from memory. The clock is
injected (anything with ``now() -> float``, e.g. `pallas.core.clock.FakeClock`), so expiry is
testable without sleeping. Writers invalidate a scope when they add or delete memory there.
One instance per process, owned by the retrieval service; not thread-safe (asyncio only).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from cachetools import LRUCache

from pallas.ranking import normalize_query

V = TypeVar("V")


class _Clock(Protocol):
    def now(self) -> float: ...


@dataclass(frozen=True, slots=True)
class QueryCacheKey:
    scope: str  # a single scope, or the sorted "|"-joined set of readable scopes
    kind: str
    query: str  # normalize_query() form


def query_cache_key(scope: str | Collection[str], kind: str, query: str) -> QueryCacheKey:
    """Build the cache key; a set of scopes is order-independent."""
    scope_text = scope if isinstance(scope, str) else "|".join(sorted(scope))
    return QueryCacheKey(scope_text, kind, normalize_query(query))


@dataclass(frozen=True, slots=True)
class CacheStats:
    hits: int
    misses: int
    expired: int
    evicted: int
    size: int


class TtlLruCache(Generic[V]):
    """Entries expire `ttl_seconds` after being stored; the least recently used go first."""

    def __init__(self, clock: _Clock, *, ttl_seconds: float = 300.0, max_entries: int = 512):
        if ttl_seconds < 0 or max_entries < 0:
            raise ValueError("ttl_seconds and max_entries must be >= 0")
        self._clock = clock
        self._ttl = ttl_seconds
        self._max = max_entries
        self._data: LRUCache[Hashable, tuple[float, V]] = LRUCache(max_entries)
        self._hits = self._misses = self._expired = self._evicted = 0

    def get(self, key: Hashable) -> V | None:
        item = self._data.get(key)  # a hit is now the most recently used
        if item is None:
            self._misses += 1
            return None
        expires_at, value = item
        if self._clock.now() >= expires_at:
            del self._data[key]
            self._expired += 1
            self._misses += 1
            return None
        self._hits += 1
        return value

    def put(self, key: Hashable, value: V) -> None:
        if self._max == 0 or self._ttl == 0:
            return
        if key not in self._data and len(self._data) >= self._max:
            self._evicted += 1  # the least recently used makes room
        self._data[key] = (self._clock.now() + self._ttl, value)

    def get_or_compute(self, key: Hashable, compute: Callable[[], V]) -> V:
        cached = self.get(key)
        if cached is not None:
            return cached
        value = compute()
        self.put(key, value)
        return value

    def invalidate(self, predicate: Callable[[Hashable], bool]) -> int:
        doomed = [k for k in self._data if predicate(k)]
        for k in doomed:
            del self._data[k]
        return len(doomed)

    def invalidate_scope(self, scope: str) -> int:
        """Drop every `QueryCacheKey` whose scope (or scope set) includes `scope`."""
        return self.invalidate(
            lambda k: isinstance(k, QueryCacheKey) and scope in k.scope.split("|")
        )

    def clear(self) -> None:
        self._data.clear()

    def __len__(self) -> int:
        return len(self._data)

    @property
    def stats(self) -> CacheStats:
        return CacheStats(self._hits, self._misses, self._expired, self._evicted, len(self._data))
