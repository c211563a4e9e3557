"""The memory service: cached, scoped retrieval over `memory_item` and every write path.

Reads: candidates for (scopes, kind[, subject]) come from one indexed query capped at
`candidate_cap` (`windows.CandidateWindows`, cached per write generation), are scored by
`scoring.retrieve` (BM25 over jieba tokens, + cosine when a vector model is active: the
in-wheel sentence encoder, or the provider's model; the vector work is
`embeddings.MemoryEmbeddings`'s, given in the constructor) and the result is cached in a
`TtlLruCache` keyed by the scopes, the kind (+ subject + config + embeddings on / off + write
generation) and the normalised query. Chosen rows get their access count / last access bumped
in one batched UPDATE, off the reply's critical path.

Writes (teaching, extraction, admin, CLI) normalise key and fingerprint, dedupe / replace in the
repository, then bump a per-scope *generation* in the StateStore. Cache keys include the
generations of the scopes read, so a write in any process sharing the StateStore (Redis) makes
older cache entries unreachable at once; the local caches are also purged directly.
"""

from __future__ import annotations

import asyncio
import heapq
import logging
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from cachetools import LRUCache

from pallas.context.prompt_guard import sanitize_inline
from pallas.core.clock import Clock
from pallas.core.state import StateStore
from pallas.core.turn import TurnInput
from pallas.features.memory.ahead import ReadAhead
from pallas.features.memory.cache import TtlLruCache, query_cache_key
from pallas.features.memory.config import RetrievalConfig
from pallas.features.memory.denials import chat_denials, rule_update
from pallas.features.memory.embeddings import MemoryEmbeddings
from pallas.features.memory.isolation import own_scope
from pallas.features.memory.items import fingerprint, normalise_key, to_candidate, with_fallback
from pallas.features.memory.judgement import FactJudge, Judgement
from pallas.features.memory.kinds import (
    PERSON_FACTS,
    PERSONAL_KINDS,
)
from pallas.features.memory.meaning import deny_by_meaning
from pallas.features.memory.profile_store import ProfileRepository
from pallas.features.memory.records import MemoryItem, NewMemory, WriteOutcome
from pallas.features.memory.repository import MemoryRepository
from pallas.features.memory.updates import retire_superseded
from pallas.features.memory.windows import SHARED_KINDS, CandidateWindows
from pallas.ranking import (
    BlockRetrievalConfig,
    MemoryCandidate,
    RetrievalResult,
    ScopedCache,
    retrieve,
)

log = logging.getLogger("pallas.memory")

TEXT_MAX_CHARS = 300
TOUCH_DELAY_S = 0.5


# A background reaction to a stored row (expansion, consolidation), given in the constructor.
MemoryListener = Callable[["MemoryService", MemoryItem], Awaitable[Any]]

_Converted = tuple[tuple[MemoryItem, ...], tuple[MemoryCandidate, ...], dict[str, MemoryItem]]


@dataclass(frozen=True, slots=True)
class BlockResult:
    kind: str
    items: tuple[MemoryItem, ...]  # relevance-chosen first, then fallback
    trace: dict[str, Any]
    # the rows most similar to the question that the gate kept out, best first (`near_k`):
    # what a profile may show aside, never as relevant
    near: tuple[MemoryItem, ...] = ()

    @property
    def ids(self) -> tuple[int, ...]:
        return tuple(i.id for i in self.items)


class MemoryService:
    def __init__(
        self,
        repo: MemoryRepository,
        state: StateStore,
        clock: Clock,
        *,
        embeddings: MemoryEmbeddings | None = None,
        cache_ttl_s: float = 300.0,
        cache_entries: int = 512,
        judge: FactJudge | None = None,
        profiles: ProfileRepository | None = None,
        write_listeners: Sequence[MemoryListener] = (),
        change_listeners: Sequence[MemoryListener] = (),
    ) -> None:
        self.repo = repo
        self._state = state
        self._clock = clock
        # The vector work (model, query vectors, indexes, re-embedding); none given: no vectors
        if embeddings is None:
            embeddings = MemoryEmbeddings(repo, state, clock, allowed=False)
        self.embeddings = embeddings
        self._results: TtlLruCache[BlockResult] = TtlLruCache(
            clock, ttl_seconds=cache_ttl_s, max_entries=cache_entries
        )
        # the candidate windows a retrieval ranks, cached per write generation
        self.windows = CandidateWindows(
            repo, state, clock, cache_ttl_s=cache_ttl_s, cache_entries=cache_entries
        )
        self._converted: LRUCache[int, _Converted] = LRUCache(64)
        # scope filter + index per loaded candidate tuple (the 7 retrievals of a turn share it)
        self._scoped = ScopedCache(max_entries=32)
        self._pending_touch: set[int] = set()
        self._touch_task: asyncio.Task[None] | None = None
        self._background = self.embeddings.jobs  # one set: drained and named together
        # Decides by meaning what a member's taught fact replaces (`update_judge`; None: rules).
        self.judge = judge
        # Called in the background with every row stored (not duplicates): index-time expansion.
        self.write_listeners: tuple[MemoryListener, ...] = tuple(write_listeners)
        # ... and with every change of a member's person facts (a denial too): consolidation.
        self.change_listeners: tuple[MemoryListener, ...] = tuple(change_listeners)
        self.profiles = profiles  # consolidated profiles ("forget me")
        # the reads of an addressed turn made before it asks: at the edge's read, after a write
        self.ahead = ReadAhead(self.windows, self.embeddings, profiles, clock, self._spawn)

    @property
    def state(self) -> StateStore:
        """The shared ephemeral state (a member's recall page)."""
        return self._state

    def now(self) -> float:
        return self._clock.now()

    @property
    def ranks_by_meaning(self) -> bool:
        """Whether retrieval has a vector model now (the encoder loaded, or the provider's):
        only then is a relevance gate a judgement of meaning rather than of shared words."""
        return self.embeddings.model() is not None

    # ------------------------------------------------------------------ reads

    async def live_items(
        self, scopes: Collection[str], kind: str, subject: int, config: RetrievalConfig
    ) -> tuple[str, tuple[MemoryItem, ...]]:
        """The scopes' write generation and a member's live rows of `kind` (cached)."""
        gen = await self.windows.generation(scopes)
        return gen, await self.windows.window(scopes, kind, subject, config.candidate_cap, gen)

    async def prewarm(self, scopes: Collection[str], config: RetrievalConfig) -> None:
        """The shared kinds' candidates and the personal rows' subjects of `scopes`, as the
        next turn loads them (`GroupPreload`)."""
        gen = await self.windows.generation(scopes)
        await self.windows.window(scopes, SHARED_KINDS[0], None, config.candidate_cap, gen)
        await self.windows.subjects(scopes, gen)

    async def retrieve(
        self,
        kind: str,
        query: str,
        *,
        scopes: Collection[str],
        config: RetrievalConfig,
        now: float,
        bot_id: int,
        group_id: int,
        subject_user_id: int | None = None,
        fallback_k: int = 0,
        near_k: int = 0,
    ) -> BlockResult:
        """Chosen rows of one block kind for `query`, from `scopes` only, with a trace; with
        `near_k`, also the rows nearest the question among those its gate kept out."""
        block = config.block(kind)
        gen = await self.windows.generation(scopes)
        weights = (config.weights, config.embedding_weight, config.concept_weight, config.vector_k)
        model = self.embeddings.model()
        salt = hash((block, weights, fallback_k, near_k, model.model_id if model else ""))
        key = query_cache_key(scopes, f"{kind}:{subject_user_id}:{salt}:{gen}", query)
        cached = self._results.get(key)
        if cached is not None:
            trace = {**cached.trace, "cache": "hit"}
            return BlockResult(cached.kind, cached.items, trace, cached.near)
        items = await self.windows.window(scopes, kind, subject_user_id, config.candidate_cap, gen)
        semantic = await self.embeddings.scores(
            query, items, scopes, kind, subject_user_id, config, bot_id, group_id, model
        )
        candidates, by_ref = self._as_candidates(items)
        if semantic.scores is not None:
            config = self.embeddings.with_vectors(config)
        # the gate grows with the rows the question was matched against: the window and the
        # index's hits beyond it (a member with more facts than the window is capped at)
        population = len(items) + len(semantic.extra)
        result = retrieve(
            query,
            candidates,
            kind=kind,
            now=now,
            allowed_scopes=scopes,
            config=config,
            semantic_scores=semantic.scores,
            scoped_cache=self._scoped,
            population=population,
        )
        if semantic.extra:
            # the vector index's rows beyond the window: scored on their own and merged, so
            # the window keeps its cached index (one with them added would be rebuilt every
            # turn: ~10 ms a turn at 5,000 rows, `benchmarks.reply_turn --encoder`)
            extra_candidates = tuple(to_candidate(i) for i in semantic.extra)
            by_ref = {**by_ref, **{i.ref: i for i in semantic.extra}}  # the cached one stays
            more = retrieve(query, extra_candidates, kind=kind, now=now, allowed_scopes=scopes,
                            config=config, semantic_scores=semantic.scores,
                            population=population)  # fmt: skip
            result = _merged(result, more, block)
            items = (*items, *semantic.extra)
        extra = with_fallback(result, items, block, fallback_k) if fallback_k else []
        chosen = tuple(by_ref[c.id] for c in result.chosen) + tuple(extra)
        trace = result.trace.to_dict()
        trace.update(
            fallback=[i.ref for i in extra],
            loaded=len(items),
            capped=len(items) - len(semantic.extra) >= config.candidate_cap,
            embeddings=semantic.scores is not None,
            question_adapter=semantic.adapted,
            vector_hits=[i.ref for i in semantic.extra],
            cache="miss",
        )
        picked = {i.ref for i in chosen}
        near = _near(semantic.scores, picked, by_ref, near_k) if near_k else ()
        out = BlockResult(kind, chosen, trace, near)
        self._results.put(key, out)
        return out

    def _as_candidates(
        self, items: tuple[MemoryItem, ...]
    ) -> tuple[tuple[MemoryCandidate, ...], dict[str, MemoryItem]]:
        """`to_candidate` of each item (a tuple: `scoring` reuses its scope filter and index)
        and the items by ref, reused while the same loaded tuple is retrieved from."""
        cached = self._converted.get(id(items))  # a hit is now the most recently used
        if cached is not None and cached[0] is items:
            return cached[1], cached[2]
        candidates = tuple(to_candidate(i) for i in items)
        by_ref = {i.ref: i for i in items}
        self._converted[id(items)] = (items, candidates, by_ref)  # holds `items`: id stays unique
        return candidates, by_ref

    # ------------------------------------------------------------------ access counts

    def touch(self, item_ids: Collection[int]) -> None:
        """Count a use of these rows; flushed in one UPDATE shortly after (never awaited)."""
        self._pending_touch.update(item_ids)
        if self._pending_touch and (self._touch_task is None or self._touch_task.done()):
            self._touch_task = self._spawn(self._flush_touch_later(), "touch flush")

    async def _flush_touch_later(self) -> None:
        await asyncio.sleep(TOUCH_DELAY_S)
        await self.flush_touches()

    async def flush_touches(self) -> None:
        ids, self._pending_touch = self._pending_touch, set()
        if ids:
            await self.repo.touch(ids, self._clock.now())

    # ------------------------------------------------------------------ writes

    async def remember(
        self,
        *,
        bot_id: int,
        scope: str,
        kind: str,
        text: str,
        origin: str,
        key: str | None = None,
        subject_user_id: int | None = None,
        author_user_id: int | None = None,
        subject_name: str = "",
        source: dict[str, Any] | None = None,
        judged: Judgement | None = None,
    ) -> WriteOutcome:
        """Store one row (deduped / newer-replaces-older by key). Raises ValueError if empty.

        A member's fact may retire their older ones: as `judged` says (the model's judgement,
        its ids re-checked here), or else as the rules say (`denials.rule_update`)."""
        clean = sanitize_inline(text, TEXT_MAX_CHARS).strip()
        fp = fingerprint(clean)
        if not fp:
            raise ValueError("nothing to remember")
        norm_key = normalise_key(key or "") or f"t_{fp[:100]}"
        outcome = await self.repo.upsert(
            NewMemory(
                bot_id=bot_id,
                scope=scope,
                kind=kind,
                key=norm_key,
                fingerprint=fp,
                text=clean,
                origin=origin,
                now=self._clock.now(),
                subject_user_id=subject_user_id,
                author_user_id=author_user_id,
                subject_name=sanitize_inline(subject_name, 64),
                source=dict(source or {}),
            )
        )
        if outcome.action != "duplicate" and kind == PERSON_FACTS and subject_user_id is not None:
            outcome = await retire_superseded(self.repo, self._clock.now(), outcome, judged)
        await self.invalidate([scope])
        if outcome.action not in ("duplicate", "contradicted"):  # a denial is history only
            for listener in self.write_listeners:
                job = _job_kind(listener)
                self._spawn(listener(self, outcome.item), f"{job} of item {outcome.item.id}", job)
        if outcome.action != "duplicate" and kind == PERSON_FACTS:
            for listener in self.change_listeners:
                job = _job_kind(listener)
                self._spawn(listener(self, outcome.item), f"{job} of item {outcome.item.id}", job)
        if outcome.action not in ("duplicate", "contradicted"):
            self.embeddings.embed_stored(outcome.item, bot_id)
        return outcome

    async def deny_by_rules(
        self,
        *,
        bot_id: int,
        scope: str,
        user_id: int,
        text: str,
        subject_name: str = "",
        source: dict[str, Any] | None = None,
    ) -> list[WriteOutcome]:
        """The offline fallback for a line a member said in chat: each of their own denials in
        it ("我已经不养猫了") retires the live fact it denies, by rules (`denials`), or — when
        no rule matched it to a fact — the one the local encoder finds clearly nearest
        (`meaning`). A denial of nothing stored stores nothing. The extraction job calls it
        when no model answered."""
        out: list[WriteOutcome] = []
        for denial in chat_denials(text):
            live = await self.repo.candidates([scope], PERSON_FACTS, subject_user_id=user_id)
            judged = rule_update(denial.fact, [(i.id, i.text) for i in live])
            if judged.op == "add":
                judged = await deny_by_meaning(self.embeddings.model(), denial, live)
            if judged.op == "add":
                continue
            outcome = await self.remember(
                bot_id=bot_id, scope=scope, kind=PERSON_FACTS, text=denial.fact,
                origin="extract", subject_user_id=user_id, author_user_id=user_id,
                subject_name=subject_name, source={**(source or {}), "rule": denial.reason},
                judged=judged,
            )  # fmt: skip
            out.append(outcome)
        return out

    async def apply_plain_chat(self, turn: TurnInput) -> list[WriteOutcome]:
        """`deny_by_rules` for one group message of a member (the offline path, one line)."""
        if turn.group_id == 0 or turn.user_id == turn.bot_id:
            return []
        return await self.deny_by_rules(
            bot_id=turn.bot_id, scope=own_scope(turn.bot_id, turn.group_id, turn.user_id),
            user_id=turn.user_id, text=turn.text, subject_name=turn.speaker.display_name,
            source={"message_ids": [turn.message_id]},
        )  # fmt: skip

    async def forget_user(self, user_id: int, scopes: Collection[str]) -> list[MemoryItem]:
        """Soft-delete person facts, relationship notes and teachings about `user_id`."""
        gone = await self.repo.forget_subject(
            user_id, now=self._clock.now(), kinds=PERSONAL_KINDS, scopes=scopes
        )
        if self.profiles is not None:
            await self.profiles.forget(user_id, scopes)
        await self.invalidate(scopes)
        return gone

    async def forget_items(
        self, item_ids: Collection[int], *, scope: str, reason: str
    ) -> list[MemoryItem]:
        """Soft-delete a member's items in `scope` (one fact forgotten, the oldest dropped at the
        cap) and tell the change listeners, so the consolidated profile is rebuilt without them
        (a stored profile stands only for the exact live facts it was made of)."""
        gone = await self.repo.soft_delete(item_ids, now=self._clock.now(), reason=reason,
                                           scopes=[scope])  # fmt: skip
        await self.invalidate([scope])
        self._changed(gone)
        return gone

    async def restore_items(self, item_ids: Collection[int], *, scope: str) -> list[MemoryItem]:
        """An undo: the items live again (see `MemoryRepository.restore`), the profile rebuilt."""
        back = await self.repo.restore(item_ids, scope=scope)
        await self.invalidate([scope])
        self._changed(back)
        return back

    def _changed(self, items: Sequence[MemoryItem]) -> None:
        # one change per member: the listener re-reads all their live facts
        item = next((i for i in items if i.kind == PERSON_FACTS), None)
        if item is None:
            return
        for listener in self.change_listeners:
            job = _job_kind(listener)
            self._spawn(listener(self, item), f"{job} of item {item.id}", job)

    async def delete(
        self, item_ids: Collection[int], *, reason: str, scopes: Collection[str] | None
    ) -> list[MemoryItem]:
        gone = await self.repo.soft_delete(
            item_ids, now=self._clock.now(), reason=reason, scopes=scopes
        )
        await self.invalidate({i.scope for i in gone})
        return gone

    async def invalidate(self, scopes: Collection[str]) -> None:
        """A write in `scopes`: their generations move on, their cached entries go, and the
        members who asked there recently have their reads made again (`ahead`)."""
        for scope in scopes:
            await self.windows.invalidate(scope)
            self._results.invalidate_scope(scope)
        self.ahead.written(scopes)

    # ------------------------------------------------------------------ background

    def _spawn(self, coro: Any, what: str, kind: str | None = None) -> asyncio.Task[None]:
        return self._background.spawn(coro, what, kind)

    async def drain(self, within_s: float | None = None) -> list[str]:
        """Wait for background work (expansion, consolidation, embeddings, touches) — for at
        most `within_s` seconds at shutdown — then write the pending touches; the names of the
        jobs dropped (logged)."""
        dropped = await self._background.drain(within_s)
        await self.flush_touches()
        return dropped


def _near(
    cosines: Mapping[str, float] | None,
    chosen: Collection[str],
    by_ref: Mapping[str, MemoryItem],
    k: int,
) -> tuple[MemoryItem, ...]:
    """The `k` rows nearest the question by the encoder's cosine among those not chosen
    (below the gate or the score threshold); none without vectors."""
    if not cosines:
        return ()
    left = (r for r in cosines if r not in chosen and r in by_ref)
    return tuple(by_ref[r] for r in heapq.nlargest(k, left, key=lambda r: (cosines[r], r)))


def _merged(
    window: RetrievalResult, extra: RetrievalResult, block: BlockRetrievalConfig
) -> RetrievalResult:
    """Two retrievals' chosen rows as one: best first, within the block's top-k and char cap
    (only rows chosen by either can be among the best of both)."""
    scores = {c.id: c for c in (*window.trace.candidates, *extra.trace.candidates)}
    chosen = {c.id: c for c in (*window.chosen, *extra.chosen)}
    order = sorted(chosen, key=lambda i: (-scores[i].score, -scores[i].similarity, i))
    picked: list[str] = []
    over_k: list[str] = []
    over_cap: list[str] = []
    chars = 0
    for ref in order:
        if len(picked) >= block.top_k:
            over_k.append(ref)
        elif chars + scores[ref].chars > block.max_chars:
            over_cap.append(ref)
        else:
            picked.append(ref)
            chars += scores[ref].chars
    a, b = window.trace, extra.trace
    trace = replace(
        a,
        candidates=tuple(sorted(scores.values(), key=lambda c: (c.gated, -c.score, c.id))),
        chosen_ids=tuple(picked),
        dropped_by_scope=a.dropped_by_scope + b.dropped_by_scope,
        dropped_by_similarity=a.dropped_by_similarity + b.dropped_by_similarity,
        dropped_by_threshold=a.dropped_by_threshold + b.dropped_by_threshold,
        dropped_by_top_k=a.dropped_by_top_k + b.dropped_by_top_k + tuple(over_k),
        dropped_by_cap=a.dropped_by_cap + b.dropped_by_cap + tuple(over_cap),
        dropped_by_subject=a.dropped_by_subject + b.dropped_by_subject,
        dropped_by_instance=a.dropped_by_instance + b.dropped_by_instance,
        dropped_by_answer_type=a.dropped_by_answer_type + b.dropped_by_answer_type,
        chars=chars,
        considered=a.considered + b.considered,
    )
    return RetrievalResult(tuple(chosen[i] for i in picked), trace)


def _job_kind(listener: object) -> str:
    """What a listener's jobs are called at shutdown: its owner's `JOB_KIND` ("expansion",
    "consolidation"), else its name."""
    owner = getattr(listener, "__self__", None)
    kind = getattr(owner, "JOB_KIND", None)
    if isinstance(kind, str):
        return kind
    return str(getattr(listener, "__name__", type(listener).__name__))
