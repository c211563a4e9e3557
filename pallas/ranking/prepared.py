"""Candidates prepared for retrieval: scope-filtered, de-duplicated, with their indexes.

`retrieve` starts by keeping the candidates of the allowed scopes (first of each id). A caller
that retrieves from the same candidates again keeps that work: the memory service through a
`ScopedCache` (keyed by its immutable loaded tuples), the old-topics source through
`prepare_candidates` per member (see `session.warm_topics`). `scoring.retrieve_prepared` then
only scores; the result is the one `retrieve` gives for the same candidates.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass

from cachetools import LRUCache

from pallas.ranking.candidate import MemoryCandidate
from pallas.ranking.candidate_index import CandidateIndex


@dataclass(slots=True)
class PreparedCandidates:
    """The in-scope, de-duplicated candidates of one candidate list (and their indexes)."""

    source: tuple[MemoryCandidate, ...] | None  # kept so its id() stays unique while cached
    kept: list[MemoryCandidate]
    by_id: dict[str, MemoryCandidate]
    out_of_scope: tuple[str, ...]
    indexes: dict[tuple[float, float], CandidateIndex]


class ScopedCache:
    """The scope filter and indexes of recently retrieved candidate *tuples* (bounded LRU).

    Owned by the memory service (one per app): its loaded rows are immutable tuples, so the
    retrievals of a turn (7 kinds) and of the next turns over the same tuple reuse the
    filtered list and the BM25 / posting index. Kept small: every entry holds an index.
    """

    def __init__(self, max_entries: int = 16) -> None:
        self._entries: LRUCache[tuple[int, frozenset[str]], PreparedCandidates] = LRUCache(
            max_entries
        )

    def __len__(self) -> int:
        return len(self._entries)

    def get(
        self, candidates: tuple[MemoryCandidate, ...], allowed: Collection[str]
    ) -> PreparedCandidates:
        key = (id(candidates), frozenset(allowed))
        cached = self._entries.get(key)  # a hit is now the most recently used
        if cached is not None and cached.source is candidates:
            return cached
        scoped = _filter_scope(candidates, allowed)
        self._entries[key] = scoped  # holds the tuple: its id() stays unique while cached
        return scoped

    def clear(self) -> None:
        self._entries.clear()


def scoped_candidates(
    candidates: Iterable[MemoryCandidate], allowed: Collection[str], cache: ScopedCache | None
) -> PreparedCandidates:
    """Scope filter + de-duplication; remembered in `cache` for a candidate tuple."""
    if cache is not None and isinstance(candidates, tuple):
        return cache.get(candidates, allowed)
    return _filter_scope(candidates, allowed)


def prepare_candidates(
    candidates: Iterable[MemoryCandidate], allowed_scopes: Collection[str]
) -> PreparedCandidates:
    """The scope filter and de-duplication `retrieve` starts with, done once for candidates a
    caller keeps (and scores with `retrieve_prepared` on later turns)."""
    return _filter_scope(candidates, allowed_scopes)


def _filter_scope(
    candidates: Iterable[MemoryCandidate], allowed: Collection[str]
) -> PreparedCandidates:
    by_id: dict[str, MemoryCandidate] = {}
    out_of_scope: list[str] = []
    for cand in candidates:
        if cand.scope not in allowed:
            out_of_scope.append(cand.id)
        elif cand.id not in by_id:
            by_id[cand.id] = cand
    source = candidates if isinstance(candidates, tuple) else None
    return PreparedCandidates(source, list(by_id.values()), by_id, tuple(out_of_scope), {})
