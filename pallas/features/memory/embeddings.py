"""Memory's vector work: the model, the question's vector per turn, cosines, and re-embedding.

`MemoryEmbeddings` is the one object a `MemoryService` asks about meaning. For one retrieval,
`scores` gives the cosines of the loaded rows and the nearest older rows the recent window
missed (the vector indexes of `vector_store`). The question is encoded once per turn (by the
encoder's process, or the provider's model); the search is one matrix pass per index
(`_search`), on the event loop: a group's 10,000 knowledge rows and a three-part question take
~2 ms there (`vector_index._best`, by cache-sized blocks). A scope's shared rows of
SEARCH_THREAD_ROWS or more go to a worker thread, where the pass is one BLAS call and the loop
serves other lines meanwhile. The threshold was 2,000 rows; at 10,000 the thread's pass had a
63 ms p99 against 5 ms on the loop (`benchmarks.reply_turn --encoder`, the turn's local time
p99 54.6 against 30.1 ms): handing the result back to a busy loop, and the GIL, cost more than
the pass. Rows without the active
model's vector are embedded in the background: the loaded ones first (a backfill), then the
rest of the scope (a budgeted re-embedding run, see REEMBED_*). A stored row is embedded in the
background (`embed_stored`). The store's reads and writes stay in the service (`service.py`).

Which model makes the vectors is `embedder.MemoryEmbedder`'s decision; `allowed=False` turns
vectors off whatever it says (BM25 and concept classes only).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from cachetools import LRUCache

from pallas.core import state_keys
from pallas.core.background import BackgroundJobs
from pallas.core.clock import Clock
from pallas.core.single_flight import SingleFlight
from pallas.core.state import StateStore
from pallas.features.memory.cache import QueryCacheKey, TtlLruCache, query_cache_key
from pallas.features.memory.config import RetrievalConfig
from pallas.features.memory.embedder import ActiveModel, MemoryEmbedder, rounded
from pallas.features.memory.kinds import PERSON_FACTS
from pallas.features.memory.records import MemoryItem
from pallas.features.memory.repository import MemoryRepository
from pallas.features.memory.vector_store import KeptIndex, MemoryVectors
from pallas.providers.client import LLMClient
from pallas.providers.encoder_process import EncoderUnavailable
from pallas.providers.encoder_slot import EncoderSlot
from pallas.providers.sentence_encoder import SentenceEncoder
from pallas.ranking import (
    IndexRows,
    QuestionAdapter,
    Vector,
    VectorHit,
    encoded_parts,
    load_question_adapters,
    nearest_with_cosines,
    normalize_query,
    recall_question,
    speaker_voice,
    unit,
)

log = logging.getLogger("pallas.memory")

BACKFILL_BATCH = 32
# Loaded rows still without the active model's vector (taught while the encoder loaded, or
# moments ago) are encoded in the question's hop, up to this many: a fact just taught is
# ranked by meaning at once, not left out of a ranked profile until its backfill ran.
INLINE_EMBED_MAX = 16
# Re-embedding after a model change (or of rows older than the model tag): batches of
# BACKFILL_BATCH with a pause between them, at most REEMBED_PER_RUN rows per run (the next
# retrieval of that scope starts the next run), one run per (scope, kind) at a time.
REEMBED_PAUSE_S = 0.2
REEMBED_PER_RUN = 2_000
WINDOWS_KEPT = 64  # loaded tuples whose ids and refs are kept (`_Window`)
# How deep a retrieval reads into the index's cosine ranking (`vector_depth`): twice its block's
# top-k, at least VECTOR_DEPTH_MIN rows. Each row found beyond the window is read, tokenized and
# scored every turn: 20 of them for the three-fact knowledge block were ~5 ms of a turn's loop
# CPU (`benchmarks.reply_turn --encoder`, 5,000 knowledge rows). With a member's 200 facts and
# the window cut to 30 (the rest found by the index alone), depths 8 and 20 ranked the same
# facts first and in the first five; 5 lost one (dev half, `benchmarks.member_recall`).
VECTOR_DEPTH_MIN = 8
# a search over at least this many shared rows (~1 ms of BLAS and up) runs in a worker thread
SEARCH_THREAD_ROWS = 20_000  # a pass of ~7 ms on the loop and more: a worker thread


@dataclass(frozen=True, slots=True)
class VectorScores:
    """What the vectors say for one retrieval."""

    scores: dict[str, float] | None = None  # ref → cosine, None = no embeddings this turn
    extra: tuple[MemoryItem, ...] = ()  # rows found by the vector index beyond the window
    adapted: bool = False  # the question reweighted by the encoder's `QuestionAdapter`


def vector_depth(vector_k: int, top_k: int) -> int:
    """How many of the nearest rows a retrieval of a block with `top_k` asks the index for:
    twice its top-k, at least VECTOR_DEPTH_MIN, at most `vector_k` (0: none, the window only).
    A row far down the ranking by meaning rarely fuses into a block's first few, and each
    one costs a read, its tokens and its score every turn (see VECTOR_DEPTH_MIN)."""
    if vector_k <= 0:
        return 0
    return min(vector_k, max(VECTOR_DEPTH_MIN, 2 * top_k))


class MemoryEmbeddings:
    """The vector side of one memory service: its model, indexes, caches and background runs."""

    def __init__(
        self,
        repo: MemoryRepository,
        state: StateStore,
        clock: Clock,
        *,
        llm: LLMClient | None = None,
        encoder: EncoderSlot | None = None,
        allowed: bool = True,
        cache_ttl_s: float = 300.0,
        cache_entries: int = 512,
        adapters: Mapping[str, QuestionAdapter] | None = None,
    ) -> None:
        self._repo = repo
        # the question adapters by encoder model (`pallas.ranking.adapter`); None: the shipped
        self._adapters = dict(load_question_adapters() if adapters is None else adapters)
        self._state = state
        # The vector model: the local encoder, or the provider's (`embedder`); allowed=False:
        # no vectors at all
        self._allowed = allowed
        self.embedder = MemoryEmbedder(llm, encoder)
        self._query_encodes: SingleFlight[QueryCacheKey, Vector | None] = SingleFlight()
        # the question's unit vector(s) per (model, question): one encode a turn
        self._query_vectors: TtlLruCache[Vector] = TtlLruCache(
            clock, ttl_seconds=cache_ttl_s, max_entries=cache_entries
        )
        self._indexes = MemoryVectors(repo)
        self._windows: LRUCache[int, _Window] = LRUCache(WINDOWS_KEPT)
        self._backfilled: set[tuple[int, str]] = set()  # (row, model) asked once
        self._reembedding: set[tuple[str, str, str]] = set()  # (scope, kind, model) runs
        self._storing: set[asyncio.Task[None]] = set()  # `embed_stored` runs under way
        self._vector_configs: dict[int, tuple[RetrievalConfig, RetrievalConfig]] = {}
        # The memory's background jobs, one set: these (backfill, re-embedding) and the
        # service's (touches, listeners), so a shutdown drains and names them together.
        self.jobs = BackgroundJobs("memory", log)

    def kept_rows(self) -> list[MemoryItem]:
        """The rows kept beside the vector indexes (`vector_store`), for a footprint."""
        return self._indexes.kept_rows()

    def model(self) -> ActiveModel | None:
        """The vector model of this retrieval (None: BM25 and concept classes only)."""
        return self.embedder.active() if self._allowed else None

    def encodes_locally(self) -> bool:
        """Whether the active vector model is the local encoder (no provider bill a call)."""
        model = self.model()
        return model is not None and model.encoder is not None

    async def question_ahead(self, query: str, bot_id: int, group_id: int) -> None:
        """Encode `query` for the turn about to retrieve with it (`ReadAhead.anticipate`):
        the vector is cached, or a retrieval asking meanwhile joins this encode."""
        model = self.model()
        if model is None or model.encoder is None:
            return
        try:
            await self._question(query, _question_key(model.model_id, query), model, bot_id,
                                 group_id)  # fmt: skip
        except EncoderUnavailable:  # logged once by the encoder; the turn does without
            return

    async def index_ahead(self, scopes: Collection[str], kind: str) -> None:
        """Bring the scopes' `kind` indexes up to their write generation for a turn about to
        search them (`ReadAhead.anticipate`)."""
        model = self.model()
        if model is not None:
            await self._index_rows(scopes, kind, model.model_id)

    def status_zh(self) -> str:
        """What `/pallas status` says memory ranks by."""
        return self.embedder.status_zh()

    def with_vectors(self, config: RetrievalConfig) -> RetrievalConfig:
        """`config` with its concept weight for retrievals that have vectors (one copy per
        config object, not per retrieval)."""
        if config.concept_weight == config.concept_weight_with_vectors:
            return config
        cached = self._vector_configs.get(id(config))
        if cached is None or cached[0] is not config:
            if len(self._vector_configs) > 256:
                self._vector_configs.clear()
            update = {"concept_weight": config.concept_weight_with_vectors}
            cached = self._vector_configs[id(config)] = (config, config.model_copy(update=update))
        return cached[1]

    def embed_stored(self, item: MemoryItem, bot_id: int) -> None:
        """Embed a row just stored, in the background (nothing without a vector model)."""
        model = self.model()
        if model is not None:
            task = self.jobs.spawn(self._backfill([item], model, bot_id, _group_of(item.scope)),
                                   "backfill")  # fmt: skip
            self._storing.add(task)
            task.add_done_callback(self._storing.discard)

    async def stored_settled(self) -> None:
        """Wait for the vectors of the rows stored so far (`embed_stored`) to be written: an
        index refreshed after that holds them (`ahead`: the reads made again after a write)."""
        if self._storing:
            await asyncio.wait(set(self._storing))

    async def _question(
        self, query: str, key: QueryCacheKey, model: ActiveModel, bot_id: int, group_id: int
    ) -> Vector | None:
        """The question's vector, made ONCE per turn: the turn's retrievals (one per block
        kind, concurrent) share one encode (`SingleFlight`) and then the cache. The local
        encoder encodes the question's clauses (`encoded_parts`, one unit vector per row: a
        fact's cosine is its best over them); a provider's model the question without its
        remember-frame."""
        vector = self._query_vectors.get(key)
        if vector is None:

            async def encode() -> Vector | None:
                # SingleFlight runs this as a task of its own: retrievals run under
                # `eager_gather`, which steps them in the caller's task until they suspend,
                # and the HTTP client's cancel scopes must be entered and left in one task
                found: Vector | None
                if model.encoder is not None:
                    rows = rounded(await model.encoder.encode(encoded_parts(query)))
                    kept = [v for v in (unit(r) for r in rows) if v is not None]
                    found = np.stack(kept) if kept else None
                else:
                    result = await model.embed([recall_question(query)], bot_id, group_id)
                    found = unit(result[0]) if result else None
                if found is not None:
                    self._query_vectors.put(key, found)
                return found

            vector = await self._query_encodes.run(key, encode)
        return vector

    async def _inline(
        self, encoder: SentenceEncoder, q: Vector, items: Sequence[MemoryItem], offset: float
    ) -> tuple[dict[str, float], dict[int, list[float]]]:
        """Loaded rows without the active model's vector, encoded now: their cosines with `q`
        plus `offset` (by ref, clipped as `match` clips) and their vectors (stored by the
        caller)."""
        texts = [vector_text(i.kind, i.text) for i in items]
        cosines: dict[str, float] = {}
        fresh: dict[int, list[float]] = {}
        for item, row in zip(items, rounded(await encoder.encode(texts)), strict=True):
            vector = unit(row)
            if vector is None:
                continue
            best = float((np.atleast_2d(q) @ vector).max()) + offset
            cosines[item.ref] = min(max(best, 0.0), 1.0)
            fresh[item.id] = row.tolist()  # stored as a backfill would store it
        return cosines, fresh

    async def scores(
        self,
        query: str,
        items: Sequence[MemoryItem],
        scopes: Collection[str],
        kind: str,
        subject: int | None,
        config: RetrievalConfig,
        bot_id: int,
        group_id: int,
        model: ActiveModel | None,
    ) -> VectorScores:
        """Cosines for the loaded rows, plus the nearest older rows the recent window missed.

        The vector index covers every live row of the scopes made by the active model (see
        `vector_store`); rows it finds are re-checked here (kind, scope, subject) before they
        join the candidates. Rows without that model's vector are embedded in the background:
        the loaded ones first (`_backfill`), then the rest of the scope (`_reembed`).

        The question is encoded by the encoder's process (or the provider's model, over HTTP)
        while the indexes are brought up to date; the search is one matrix pass per index here
        on the loop (see the module docstring). An encoder that cannot answer (its process
        restarting) leaves this retrieval to words and concepts.
        """
        if model is None or not query.strip() or not items:
            # no loaded row: under the window's cap that is every live row of the kind (the
            # member's, for a personal kind), so there is nothing to compare the question with
            # (an @ in a new group reads no index and waits for no encode)
            return VectorScores()
        mid = model.model_id
        window = self._window(items)
        missing = window.missing(mid, self._backfilled)
        inline: list[MemoryItem] = []
        if model.encoder is not None:  # local: the first few are encoded with the question
            inline, missing = missing[:INLINE_EMBED_MAX], missing[INLINE_EMBED_MAX:]
        if missing:
            batch = missing[:BACKFILL_BATCH]
            self.jobs.spawn(self._backfill(batch, model, bot_id, group_id), "backfill")
        key = _question_key(mid, query)
        indexes = await self._index_rows(scopes, kind, mid)
        try:
            q = await self._question(query, key, model, bot_id, group_id)
            if q is None:
                return VectorScores()
            block = config.block(kind)
            depth = vector_depth(config.vector_k, block.top_k)
            adapter = self._adapters.get(mid) if block.question_adapter else None
            offset = adapter.offset if adapter is not None else 0.0
            if adapter is not None:
                q = adapter.question(q)
            snapshots = [kept.index.rows for kept in indexes]
            hits, by_id = await _search(snapshots, q, depth, subject, window.ids, offset)
            refs = window.refs
            cosines = {refs[i]: c for i, c in by_id.items()}  # keyed as the candidates are
            if inline and model.encoder is not None:
                more, fresh = await self._inline(model.encoder, q, inline, offset)
                cosines.update(more)
                self._backfilled.update((i.id, mid) for i in inline)
                self.jobs.spawn(self._store(inline, fresh, mid), "backfill")
        except EncoderUnavailable:  # logged once by the encoder: words and concepts this turn
            return VectorScores()
        self._reembed_unembedded(scopes, kind, model, bot_id)
        found = await self._hit_rows([h.item_id for h in hits if h.item_id not in refs], indexes)
        extra = tuple(
            i
            for i in found
            if i.kind == kind
            and i.scope in scopes
            and (subject is None or i.subject_user_id == subject)
        )
        near = {h.item_id: h.cosine for h in hits}
        cosines.update({i.ref: near[i.id] for i in extra})
        if not cosines:
            return VectorScores()
        return VectorScores(cosines, extra, adapted=adapter is not None)

    def _window(self, items: Sequence[MemoryItem]) -> _Window:
        """The loaded rows' ids and refs, made once per loaded tuple (the service's candidate
        cache hands the same tuple to every turn until a write)."""
        window = self._windows.get(id(items))
        if window is None or window.items is not items:
            window = self._windows[id(items)] = _Window(items)
        return window

    async def _index_rows(self, scopes: Collection[str], kind: str, model: str) -> list[KeptIndex]:
        """The scopes' indexes of `model` with their rows, each refreshed to its scope's write
        generation."""
        gens = {s: str(await self._state.get(state_keys.memory_generation(s)) or 0) for s in scopes}
        return await self._indexes.rows(scopes, kind, gens, model=model)

    async def _hit_rows(
        self, item_ids: list[int], indexes: Sequence[KeptIndex]
    ) -> list[MemoryItem]:
        """The rows of the index's hits beyond the window, in the hits' order, from the rows
        kept beside the indexes (`vector_store`): no read on the reply path. A hit whose row
        is not kept any more was deleted since the search (or its index evicted): read, and
        only if it is still live."""
        found: dict[int, MemoryItem] = {}
        for kept in indexes:
            found.update((i, kept.items[i]) for i in item_ids if i in kept.items)
        missing = [i for i in item_ids if i not in found]
        if missing:
            found.update((item.id, item) for item in await self._repo.get_many(missing))
        return [found[i] for i in item_ids if i in found]

    async def _backfill(
        self, items: Sequence[MemoryItem], model: ActiveModel, bot_id: int, group_id: int
    ) -> None:
        self._backfilled.update((i.id, model.model_id) for i in items)
        vectors = await model.embed([vector_text(i.kind, i.text) for i in items], bot_id, group_id)
        for item, vector in zip(items, vectors, strict=False):
            await self._repo.set_embedding(item.id, vector, model.model_id)
            self._indexes.mark_dirty(item.scope)

    async def _store(
        self, items: Sequence[MemoryItem], vectors: dict[int, list[float]], model_id: str
    ) -> None:
        """Store the vectors a retrieval made for its loaded rows (`_local_match`)."""
        for item in items:
            vector = vectors.get(item.id)
            if vector is not None:
                await self._repo.set_embedding(item.id, vector, model_id)
                self._indexes.mark_dirty(item.scope)

    def _reembed_unembedded(
        self, scopes: Collection[str], kind: str, model: ActiveModel, bot_id: int
    ) -> None:
        """Start a background run for each scope whose index found live rows without the
        active model's vector (a changed model, rows older than the model tag)."""
        for scope in scopes:
            key = (scope, kind, model.model_id)
            if self._indexes.unembedded.get(key, 0) > 0 and key not in self._reembedding:
                self._reembedding.add(key)
                self.jobs.spawn(self._reembed(scope, kind, model, bot_id),
                                f"re-embed {scope} {kind}")  # fmt: skip

    async def _reembed(self, scope: str, kind: str, model: ActiveModel, bot_id: int) -> None:
        """Embed a scope's rows lacking the model's vector, a batch at a time with a pause
        between batches (the budget: see REEMBED_*), at most REEMBED_PER_RUN rows a run."""
        key = (scope, kind, model.model_id)
        done = 0
        try:
            while done < REEMBED_PER_RUN:
                rows = await self._repo.needing_vectors(
                    scope, kind, model.model_id, limit=BACKFILL_BATCH
                )
                if not rows:
                    break
                texts = [vector_text(kind, text) for _, text in rows]
                vectors = await model.embed(texts, bot_id, _group_of(scope))
                if len(vectors) != len(rows):  # the model failed: the next retrieval retries
                    break
                for (item_id, _), vector in zip(rows, vectors, strict=True):
                    await self._repo.set_embedding(item_id, vector, model.model_id)
                done += len(rows)
                self._indexes.mark_dirty(scope)
                await asyncio.sleep(REEMBED_PAUSE_S)
        finally:
            self._reembedding.discard(key)
        if done:
            log.info("memory: %d row(s) of %s %s embedded with %s", done, scope, kind,
                     model.model_id)  # fmt: skip


async def _search(
    indexes: Sequence[IndexRows],
    q: Vector,
    k: int,
    subject: int | None,
    wanted: npt.NDArray[np.int64],
    offset: float = 0.0,
) -> tuple[list[VectorHit], dict[int, float]]:
    """`nearest_with_cosines` over the indexes: a pass over a scope's shared rows of at
    least SEARCH_THREAD_ROWS runs in a worker thread as one BLAS call (it releases the GIL:
    the loop serves other groups and the turn's other sources meanwhile); the rest here."""
    if subject is None and sum(len(rows) for rows in indexes) >= SEARCH_THREAD_ROWS:
        return await asyncio.to_thread(
            nearest_with_cosines, indexes, q, k, subject=subject, wanted=wanted, one_call=True,
            offset=offset,
        )  # fmt: skip
    return nearest_with_cosines(indexes, q, k, subject=subject, wanted=wanted, offset=offset)


def _question_key(model_id: str, query: str) -> QueryCacheKey:
    """The key of a question's vector: the turn's retrievals and its anticipation share it."""
    return query_cache_key((), f"qvec:{model_id}", normalize_query(query))


class _Window:
    """One loaded tuple of rows as the vector search asks for them: their ids (one array, so
    the index remembers where they are) and refs, and the models all of them have a vector
    of (a tuple's rows never change: once none lacks a model's vector, none will)."""

    __slots__ = ("embedded", "ids", "items", "refs")

    def __init__(self, items: Sequence[MemoryItem]) -> None:
        self.items = items  # held: its id stays unique while cached
        self.ids = np.fromiter((i.id for i in items), dtype=np.int64, count=len(items))
        self.refs = {i.id: i.ref for i in items}
        self.embedded: set[str] = set()

    def missing(self, model_id: str, asked: Collection[tuple[int, str]]) -> list[MemoryItem]:
        """The rows without `model_id`'s vector not yet sent to be embedded."""
        if model_id in self.embedded:
            return []
        lacking = [i for i in self.items if i.embedding_model != model_id]
        if not lacking:
            self.embedded.add(model_id)
        return [i for i in lacking if (i.id, model_id) not in asked]


def vector_text(kind: str, text: str) -> str:
    """What a row's vector is encoded from: a person fact in the member's own voice
    (`speaker_voice`), any other row as stored."""
    return speaker_voice(text) if kind == PERSON_FACTS else text


def _group_of(scope: str) -> int:
    """The group id of a ``group:<bot>:<group>`` scope (0 for pools / private chats)."""
    parts = scope.split(":")
    return int(parts[2]) if parts[0] == "group" and len(parts) == 3 and parts[2].isdigit() else 0


__all__ = ["MemoryEmbeddings", "VectorScores", "vector_text"]
