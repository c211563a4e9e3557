"""The service's vector indexes, one per (scope, kind), kept in step with the store.

`MemoryVectors.nearest` answers "which live rows of these scopes are nearest this question"
for the memory service; `refresh` applies the delta since the index last saw the scope's write
generation (see `vector_index`). Backfilled embeddings mark the scope dirty so they join the
index on the next read, without a cache-wide invalidation. At most `MAX_INDEXES` indexes stay
in memory (least recently read evicted; 10,000 rows × 1536 float32 ≈ 61 MB each).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from cachetools import LRUCache

from pallas.features.memory.repository import MemoryRepository

if TYPE_CHECKING:  # numpy (~0.1 s to import) loads with the first index: embeddings in use
    from pallas.ranking import VectorHit, VectorIndex

MAX_INDEXES = 64  # (scope, kind) indexes kept in memory; the least recently read go first


class MemoryVectors:
    def __init__(self, repo: MemoryRepository, *, max_indexes: int = MAX_INDEXES) -> None:
        self._repo = repo
        # the least recently read index goes first (rebuilt from the database if read again)
        self._indexes: LRUCache[tuple[str, str], VectorIndex] = LRUCache(max(1, max_indexes))
        self._dirty: set[str] = set()

    def mark_dirty(self, scope: str) -> None:
        self._dirty.add(scope)

    async def index(self, scope: str, kind: str, generation: str) -> VectorIndex:
        """The index of (scope, kind), refreshed when the scope's generation moved."""
        index = self._indexes.get((scope, kind))  # a hit is now the most recently read
        if index is None:
            from pallas.ranking import VectorIndex

            index = self._indexes[(scope, kind)] = VectorIndex()
        if index.generation != generation or scope in self._dirty:
            await self.refresh(index, scope, kind)
            index.generation = generation
            self._dirty.discard(scope)
        return index

    async def refresh(self, index: VectorIndex, scope: str, kind: str) -> None:
        live = await self._repo.live_ids(scope, kind)
        index.keep_only(live)
        known = index.ids
        missing = [i for i in live if i not in known]
        if missing:
            index.add(await self._repo.vectors(missing))

    async def nearest(
        self,
        query: Sequence[float],
        scopes: Collection[str],
        kind: str,
        generations: dict[str, str],
        *,
        k: int,
        subject: int | None = None,
    ) -> tuple[list[VectorHit], dict[int, VectorIndex]]:
        """The `k` nearest rows over `scopes` (best first) and, per hit, the index it came from."""
        hits: list[VectorHit] = []
        owner: dict[int, VectorIndex] = {}
        for scope in sorted(scopes):
            index = await self.index(scope, kind, generations.get(scope, "0"))
            for hit in index.search(query, k, subject=subject):
                hits.append(hit)
                owner[hit.item_id] = index
        hits.sort(key=lambda h: (-h.cosine, h.item_id))
        return hits[:k], owner

    async def cosines(
        self,
        query: Sequence[float],
        scopes: Collection[str],
        kind: str,
        generations: dict[str, str],
        item_ids: Collection[int],
    ) -> dict[int, float]:
        """Cosine of `query` with each of `item_ids` that has a vector, over `scopes`."""
        out: dict[int, float] = {}
        for scope in sorted(scopes):
            index = await self.index(scope, kind, generations.get(scope, "0"))
            out.update(index.cosines(query, item_ids))
        return out
