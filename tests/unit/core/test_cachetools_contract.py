"""What Pallas relies on in cachetools (pinned in pyproject.toml): a version that changes it
fails here, not as a cache that evicts the wrong entries.

LRUCache: every read refreshes. FIFOCache: a read does not, a key set again moves to the end —
the caches that must read without refreshing (a listener, a freshness check) use it and set
the key again on a real use."""

from __future__ import annotations

import pytest
from cachetools import FIFOCache, LRUCache


def _fill(cache: LRUCache[str, int] | FIFOCache[str, int]) -> None:
    for key in "abc":
        cache[key] = ord(key)


@pytest.mark.parametrize(
    ("kind", "step", "left"),
    [
        (LRUCache, "get a", "acd"),  # a read refreshes: b goes
        (FIFOCache, "get a", "bcd"),  # a read does not: a goes
        (LRUCache, "set a", "acd"),
        (FIFOCache, "set a", "acd"),  # set again: moved to the end
        (LRUCache, "in a", "bcd"),  # a membership test is not a use
        (FIFOCache, "setdefault a", "bcd"),  # nor a setdefault of a present key
    ],
)
def test_which_entry_a_full_cache_drops(kind: type, step: str, left: str) -> None:
    cache = kind(3)
    _fill(cache)
    op, key = step.split()
    if op == "get":
        cache.get(key)
    elif op == "set":
        cache[key] = 0
    elif op == "in":
        assert key in cache
    else:
        cache.setdefault(key, 0)
    cache["d"] = 0
    assert "".join(sorted(cache)) == left
