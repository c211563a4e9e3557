"""The rows a retrieval ranks (its candidate window), cached per write generation of the scopes.

A window is one indexed query capped at `candidate_cap`: the group's shared kinds (memory
sections + knowledge) in one statement for all of them, a member's personal rows only when
someone's rows are about them (`subjects`, one read per scope generation: a new member's @
makes no query). Windows and subject sets are cached in `TtlLruCache`s keyed by the scopes'
*generation* (a counter per scope in the StateStore that every write bumps, so a write in any
process sharing the StateStore makes older entries unreachable at once); concurrent misses of
one key share one read (`SingleFlight`: an anticipated turn's read and the turn's own).
"""

from __future__ import annotations

from collections.abc import Collection

from pallas.core import state_keys
from pallas.core.clock import Clock
from pallas.core.single_flight import SingleFlight
from pallas.core.state import StateStore
from pallas.features.memory.cache import QueryCacheKey, TtlLruCache, query_cache_key
from pallas.features.memory.kinds import (
    KNOWLEDGE,
    MEMORY_SECTION_KINDS,
    PERSON_FACTS,
    PERSONAL_KINDS,
    RELATIONSHIP,
)
from pallas.features.memory.records import MemoryItem
from pallas.features.memory.repository import MemoryRepository

# read for the whole group on every turn (no subject): loaded together, one statement
SHARED_KINDS = (*MEMORY_SECTION_KINDS, KNOWLEDGE)
# read about the speaker on every turn (the relationship and person-facts sources)
SPEAKER_KINDS = (PERSON_FACTS, RELATIONSHIP)

Window = tuple[MemoryItem, ...]


class CandidateWindows:
    """The memory service's reads of candidate windows, and their caches."""

    def __init__(
        self,
        repo: MemoryRepository,
        state: StateStore,
        clock: Clock,
        *,
        cache_ttl_s: float = 300.0,
        cache_entries: int = 512,
    ) -> None:
        self._repo = repo
        self._state = state
        self._windows: TtlLruCache[Window] = TtlLruCache(
            clock, ttl_seconds=cache_ttl_s, max_entries=cache_entries
        )
        # who the personal rows of a scope set are about: a new member's rows need no query
        self._subject_sets: TtlLruCache[frozenset[int]] = TtlLruCache(
            clock, ttl_seconds=cache_ttl_s, max_entries=cache_entries
        )
        # concurrent misses share one read
        self._shared_loads: SingleFlight[QueryCacheKey, None] = SingleFlight()
        self._subject_loads: SingleFlight[QueryCacheKey, frozenset[int]] = SingleFlight()
        self._window_loads: SingleFlight[QueryCacheKey, Window] = SingleFlight()

    async def generation(self, scopes: Collection[str]) -> str:
        """The scopes' write generation, as cache keys carry it."""
        gens = [await self._state.get(state_keys.memory_generation(s)) or 0 for s in sorted(scopes)]
        return ".".join(str(g) for g in gens)

    async def invalidate(self, scope: str) -> None:
        """A write in `scope`: its generation moves on and its cached windows go."""
        await self._state.incr(state_keys.memory_generation(scope))
        self._windows.invalidate_scope(scope)
        self._subject_sets.invalidate_scope(scope)

    async def window(
        self, scopes: Collection[str], kind: str, subject: int | None, cap: int, gen: str
    ) -> Window:
        """The rows of `kind` in `scopes` (a member's, with `subject`) a retrieval ranks."""
        key = _window_key(scopes, kind, subject, cap, gen)
        cached = self._windows.get(key)
        if cached is not None:
            return cached
        if subject is None and kind in SHARED_KINDS:  # the group's kinds: one statement
            shared = query_cache_key(scopes, f"shared:{cap}:{gen}", "")
            await self._shared_loads.run(shared, lambda: self._read_shared(scopes, cap, gen))
            cached = self._windows.get(key)
            if cached is not None:
                return cached
        personal = subject is not None and kind in PERSONAL_KINDS
        if personal and subject not in await self.subjects(scopes, gen):
            self._windows.put(key, ())  # nothing stored about this member: no query
            return ()
        return await self._read(key, scopes, kind, subject, cap)

    async def speaker_window(
        self, scopes: Collection[str], kind: str, subject: int, cap: int, gen: str
    ) -> Window:
        """`window` of a member's rows read without first asking who has rows: read ahead
        beside the subjects (`window` then joins this read, or finds it cached)."""
        key = _window_key(scopes, kind, subject, cap, gen)
        cached = self._windows.get(key)
        return cached if cached is not None else await self._read(key, scopes, kind, subject, cap)

    async def subjects(self, scopes: Collection[str], gen: str) -> frozenset[int]:
        """Who the personal rows of `scopes` are about (one read per scope generation)."""
        key = _subjects_key(scopes, gen)
        cached = self._subject_sets.get(key)
        if cached is not None:
            return cached
        subjects = await self._subject_loads.run(
            key, lambda: self._repo.subjects(scopes, PERSONAL_KINDS)
        )
        self._subject_sets.put(key, subjects)
        return subjects

    def known_subjects(self, scopes: Collection[str], gen: str) -> frozenset[int] | None:
        """`subjects` when cached for this generation, else None (no read)."""
        return self._subject_sets.get(_subjects_key(scopes, gen))

    async def _read(
        self, key: QueryCacheKey, scopes: Collection[str], kind: str, subject: int | None, cap: int
    ) -> Window:
        """One read per key in flight."""

        async def read() -> Window:
            items = tuple(
                await self._repo.candidates(scopes, kind, subject_user_id=subject, limit=cap)
            )
            self._windows.put(key, items)
            return items

        return await self._window_loads.run(key, read)

    async def _read_shared(self, scopes: Collection[str], cap: int, gen: str) -> None:
        """The windows of every shared kind (memory sections + knowledge), one read."""
        loaded = await self._repo.candidates_by_kind(scopes, SHARED_KINDS, limit=cap)
        for kind, items in loaded.items():
            self._windows.put(_window_key(scopes, kind, None, cap, gen), tuple(items))


def _window_key(
    scopes: Collection[str], kind: str, subject: int | None, cap: int, gen: str
) -> QueryCacheKey:
    return query_cache_key(scopes, f"{kind}:{subject}:{cap}:{gen}", "")


def _subjects_key(scopes: Collection[str], gen: str) -> QueryCacheKey:
    return query_cache_key(scopes, f"subjects:{gen}", "")


__all__ = ["SHARED_KINDS", "SPEAKER_KINDS", "CandidateWindows", "Window"]
