"""Pure retrieval scoring: BM25, cosine, hybrid similarity, relevance, threshold, top-k, caps.

relevance = w_sim·sim + w_recency·exp(−days/recency_days) + w_freq·min(1, log(count+1)/5)
with the defaults 0.6 / 0.3 / 0.1 and recency_days = 7 (often read as a half-life; in
the formula it is the e-folding time, so the recency term halves every 7·ln 2 ≈ 4.85 days).

**Similarity gate.** Recency and frequency are bonuses for *relevant* memories, never a reason
to retrieve on their own: a candidate whose similarity is below `min_similarity` (and always one
with zero similarity) is dropped before recency/frequency are added. Without the gate a fact used
yesterday would outscore the threshold for any query at all (0.3 + 0.1 > 0.3).
With vectors, a block may raise its gate for a retrieval over many candidates (the best of
more unrelated facts scores higher): `gate.similarity_gate`, recorded in the trace with its reason.
A block with `match_subject` (person facts) also gates out a candidate about one of the member's
people that the question does not ask about (`subjects`; the trace's `dropped_by_subject`), and
one with `match_instance` a candidate naming another instance of a class than the question
names ("猫" for "我的狗…", `instances`; the trace's `dropped_by_instance`), and one with
`match_answer_type` a candidate telling no number for a question asking one ("我几岁了" →
"TA过年喜欢守岁", `answer_type`; the trace's `dropped_by_answer_type`).

**BM25 normalisation.** Raw BM25 is unbounded. `Bm25Index.normalised_scores` divides each raw
score by the query's *ideal* score — what a document of average length containing every query
term once would get — and clamps to 1. A query term absent from the corpus still counts in the
ideal (weighted like the query's most informative known term). So 1.0 means "covers the query"
and 0.3 "covers about a third of the query's weight"; the best candidate of an irrelevant lot
does not get 1.0 merely for being the best, as plain max-normalisation would give it, and a
tiny corpus does not turn a one-word overlap into a perfect match.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

from pallas.core.clock import DAY_S
from pallas.ranking.answer_type import class_answers_alone
from pallas.ranking.candidate import MemoryCandidate as MemoryCandidate
from pallas.ranking.candidate_index import Bm25Index as Bm25Index
from pallas.ranking.candidate_index import CandidateIndex, candidate_index
from pallas.ranking.candidate_score import CandidateScore as CandidateScore
from pallas.ranking.concepts import parts_scorer, query_concepts
from pallas.ranking.gate import similarity_gate
from pallas.ranking.prepared import PreparedCandidates, scoped_candidates
from pallas.ranking.prepared import ScopedCache as ScopedCache
from pallas.ranking.prepared import prepare_candidates as prepare_candidates
from pallas.ranking.subjects import asks_about_one_of_them, question_about
from pallas.ranking.text import question_parts, tokenize
from pallas.ranking.trace import RetrievalResult as RetrievalResult
from pallas.ranking.trace import RetrievalTrace
from pallas.ranking.vetoes import veto
from pallas.ranking.weights import BlockRetrievalConfig, RelevanceWeights, ScoringConfig

# ---------------------------------------------------------------- similarity


def cosine_similarity(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine of two vectors, clamped to 0..1 (opposite directions count as unrelated)."""
    if len(a) != len(b) or not a:
        return 0.0
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    if na == 0 or nb == 0:
        return 0.0
    return max(0.0, min(1.0, dot / (na * nb)))


def hybrid_similarity(
    bm25: float | None, embedding: float | None, embedding_weight: float
) -> float:
    """Mix of lexical and semantic similarity; whichever exists alone is used as is."""
    if bm25 is not None and embedding is not None:
        return (1.0 - embedding_weight) * bm25 + embedding_weight * embedding
    if embedding is not None:
        return embedding
    return bm25 if bm25 is not None else 0.0


def concept_bonus(
    sim: float,
    concept: float | None,
    config: ScoringConfig,
    *,
    vectors: bool,
    cosine: float | None = None,
    bonus_only: bool = False,
) -> float:
    """`sim` with the concept evidence (`concept` the share of the question's classes the fact
    covers; `config.concept_weight` is the one the retrieval runs with — the memory service
    swaps in `concept_weight_with_vectors` when it has vectors).

    Without vectors: raised to `concept_weight` × the share when that is larger — the concept
    table is the only judge of meaning, so a full class match reaches the gate alone. With
    vectors: `concept_bonus_with_vectors` × the share is added (capped at 1), and the raise
    to `concept_weight` × the share applies only when the encoder does not call the fact
    unrelated (its cosine at least `concept_min_cosine`, or no vector for it yet) and the
    class can answer the question alone (`bonus_only` false: `answer_type.class_answers_alone`)
    — for a yes-or-no question a fact of the class names another value ("我去过新疆吗" →
    "TA在成都读大三"), and a question asking only for a name is not answered by every fact
    telling a name ("我婆婆叫什么" → "TA家仓鼠取名叫奶盖"), so the bonus only.

    Why: with the raise alone, a class match put a fact the encoder found unrelated past the
    person-facts gate — "我说过我喜欢哪个足球队吗" → "TA周末在学滑板" (sport, cosine 0.15),
    "我老伴是做什么的" → "TA以前在纺织厂上班" (job, 0.22) — and tied every such fact at
    0.5, so the cosine could not order them; the bonus orders them and the floor vetoes the
    unrelated ones, while "我有什么东西不能吃" still finds "TA对花生过敏" (restriction, 0.32).
    Member-recall dev half, 50 / 200 facts, gate 0.35 (`benchmarks.member_recall_gate`):
    acc@1 58 → 66 % / 43 → 53 %, the fact past the gate and in the first five 73 → 75 % /
    68 → 73 %, negative controls empty 70 → 78 % / 44 → 56 %."""
    if concept is None:
        return sim
    if vectors:
        sim = min(1.0, sim + config.concept_bonus_with_vectors * concept)
        if cosine is not None and cosine < config.concept_min_cosine:
            return sim  # the encoder calls it unrelated: the class match is no score alone
        if bonus_only:
            return sim  # the class alone is not the answer (`class_answers_alone`)
    by_class = config.concept_weight * concept
    return by_class if by_class > sim else sim


def subject_raise(sim: float, about_asked: bool, block: BlockRetrievalConfig) -> float:
    """`sim` of a candidate, at least `block.subject_similarity` when it is about the person
    the question asks about (`subjects.fact_about`, with `match_subject`): "我闺女今年多大" →
    "TA女儿三岁了" (cosine 0.46, no shared word: 闺女 / 女儿) is about the daughter asked
    about. Member-recall dev sets (`benchmarks.member_recall_gate`): one fact more kept on two
    of seven sets at every size, no never-said question less empty."""
    return max(sim, block.subject_similarity) if about_asked and block.match_subject else sim


# ---------------------------------------------------------------- relevance


def recency_term(days: float, recency_days: float = 7.0) -> float:
    return math.exp(-max(0.0, days) / recency_days)


def frequency_term(access_count: int, divisor: float = 5.0) -> float:
    return min(1.0, math.log(max(0, access_count) + 1) / divisor)


def relevance(
    sim: float,
    days_since_last_access: float,
    access_count: int,
    weights: RelevanceWeights | None = None,
) -> float:
    """w_sim·sim + w_recency·exp(−days/7) + w_freq·log(count+1)/5 (no similarity gate here)."""
    w = weights or RelevanceWeights()
    return (
        w.similarity * sim
        + w.recency * recency_term(days_since_last_access, w.recency_days)
        + w.frequency * frequency_term(access_count, w.frequency_divisor)
    )


# ---------------------------------------------------------------- selection
# (what was chosen and why is recorded in `trace`)


@dataclass(frozen=True, slots=True)
class _Signals:
    """What scores a candidate besides its own row: BM25 raw scores by position and the
    ideal score, the question's concept scorer (None: no concepts asked) and the candidates'
    classes by position, the vector similarity by id (None: no vectors this retrieval),
    whether a class match alone can answer the question, and the candidates about the person
    it asks about."""

    raw: Mapping[int, float]
    ideal: float
    concept_of: Callable[[frozenset[str]], float | None] | None
    classes: Sequence[frozenset[str]]
    semantic_of: Callable[[str], float | None] | None
    bonus_only: bool = False  # the class alone is not the answer (`concept_bonus`)
    # positions of the candidates about the person asked about, and the similarity they get
    # at least (`subject_similarity`)
    about: Collection[int] = ()
    subject_similarity: float = 0.0


def _score_positions(
    positions: Iterable[int],
    candidates: Sequence[MemoryCandidate],
    signals: _Signals,
    config: ScoringConfig,
    weights: RelevanceWeights,
    mix: float,
    min_similarity: float,
    now: float,
) -> list[CandidateScore]:
    """The scores of the candidates at `positions`, in that order.

    Lexical similarity = raw BM25 / the ideal score (at most 1), hybrid with the cosine when
    vectors exist. The concept share then counts as `concept_bonus` says: without vectors it
    raises the similarity to `concept_weight` × the share when that is larger; with vectors
    (this retrieval has cosines) a small bonus is added, and the raise applies only where the
    cosine does not call the fact unrelated. Recency and frequency
    (`recency_term`, `frequency_term`) are added past the similarity gate. One loop with the
    arithmetic inline (a function call per candidate cost about a third of it); the
    arithmetic is `relevance`'s and `concept_bonus`'s, term for term and in the same order,
    so the values are identical.
    """
    w = weights
    concept_weight = config.concept_weight
    w_sim, w_recency, w_freq = w.similarity, w.recency, w.frequency
    recency_days, divisor = w.recency_days, w.frequency_divisor
    raw, ideal, classes_at = signals.raw.get, signals.ideal, signals.classes
    concept_of, semantic_of = signals.concept_of, signals.semantic_of
    vectors = semantic_of is not None  # see `concept_bonus`
    bonus, min_cosine = config.concept_bonus_with_vectors, config.concept_min_cosine
    bonus_only = signals.bonus_only
    about, subject_similarity = signals.about, signals.subject_similarity
    shares: dict[frozenset[str], float | None] = {}  # concept share per distinct class set
    frequencies: dict[int, float] = {}  # frequency term per access count
    exp, new = math.exp, tuple.__new__
    scored: list[CandidateScore] = []
    append = scored.append
    for pos in positions:
        cand = candidates[pos]
        bm25 = 0.0
        if ideal > 0:
            ratio = raw(pos, 0) / ideal
            bm25 = ratio if ratio < 1.0 else 1.0  # min(1.0, ratio)
        embedding = None if semantic_of is None else semantic_of(cand.id)
        sim = bm25 if embedding is None else (1.0 - mix) * bm25 + mix * embedding  # hybrid
        concept = None
        if concept_of is not None:
            classes = classes_at[pos]
            concept = shares.get(classes, _MISSING)
            if concept is _MISSING:
                concept = shares[classes] = concept_of(classes)
            if concept is not None:  # `concept_bonus`, inline
                vetoed = False
                if vectors:
                    sim = min(1.0, sim + bonus * concept)
                    vetoed = bonus_only or (embedding is not None and embedding < min_cosine)
                if not vetoed and (by_class := concept_weight * concept) > sim:
                    sim = by_class  # max(sim, concept_weight * concept)
        if about and sim < subject_similarity and pos in about:
            sim = subject_similarity  # `subject_raise`
        last = cand.last_access_at if cand.last_access_at is not None else cand.created_at
        days = (now - last) / DAY_S  # days_since_access, clamped at 0 as max(0.0, …) does
        recency = exp(-(days if days > 0.0 else 0.0) / recency_days)
        count = cand.access_count
        freq = frequencies.get(count)
        if freq is None:
            freq = frequencies[count] = frequency_term(count, divisor)
        gated = sim <= 0.0 or sim < min_similarity
        total = 0.0 if gated else w_sim * sim + w_recency * recency + w_freq * freq
        row = (cand.id, bm25, embedding, sim, recency, freq, total, len(cand.text), gated, concept)
        append(new(CandidateScore, row))  # CandidateScore(*row) without its Python-level __new__
    return scored


def score_candidates(
    query: str,
    candidates: Sequence[MemoryCandidate],
    *,
    now: float,
    config: ScoringConfig,
    block: BlockRetrievalConfig,
    query_embedding: Sequence[float] | None = None,
    embeddings: Mapping[str, Sequence[float]] | None = None,
    semantic_scores: Mapping[str, float] | None = None,
    index: CandidateIndex | None = None,
    min_similarity: float | None = None,
) -> tuple[list[CandidateScore], list[str]]:
    """(scores of the candidates that can pass the gate, ids of the others by id).

    The gate is `min_similarity` when given (the retrieval's `similarity_gate`), else the
    block's base gate (`min_similarity`, or `min_similarity_with_vectors` with vectors).

    BM25 statistics come from these candidates only. Similarity per candidate: BM25 (mixed
    with cosine when vectors exist), raised to `concept_weight` × the concept similarity when
    that is larger (see `concepts`). Only candidates sharing a term, a concept class or a
    vector score with the query are scored (`candidate_index`); the others have similarity 0.
    """
    if not candidates:  # nothing to score (an empty kind): what the steps below give
        return [], []
    if min_similarity is None:  # the block's own gate, as `similarity_gate` sets its base
        vectors_on = semantic_scores is not None or query_embedding is not None
        min_similarity = similarity_gate(block, 0, vectors=vectors_on).min_similarity
    gate = min_similarity
    mix = config.embedding_weight if block.embedding_weight is None else block.embedding_weight
    if index is None:
        texts = [c.index_text for c in candidates]
        index = candidate_index([c.id for c in candidates], texts, config.bm25_k1, config.bm25_b)
    query_tokens = tokenize(query)
    terms = index.bm25.query_terms(query_tokens)
    ideal = index.bm25.ideal_score(query_tokens)
    asked = frozenset[str]()
    parts: tuple[frozenset[str], ...] = ()
    if config.concept_weight > 0:  # the whole question's classes, and each clause's
        parts = tuple(query_concepts(part) for part in question_parts(query))
        asked = frozenset().union(*parts)
    positions = index.matching(terms, asked)
    vectors: Collection[str] = ()
    if semantic_scores is not None:  # precomputed by the vector index
        # a candidate sharing no term and no class with the question has similarity
        # embedding_weight × cosine: below the gate it is dropped whatever its score, so only
        # the cosines that can pass it add candidates (the vector index gives one for every
        # loaded row: scoring them all cost ~3 ms a block, benchmarks.reply_turn --encoder)
        floor = gate / mix if mix else 2.0
        vectors = [i for i, cosine in semantic_scores.items() if cosine >= floor]
    elif query_embedding is not None and embeddings:
        vectors = embeddings
    positions.update(index.by_id[i] for i in vectors if i in index.by_id)
    asked_people = question_about(query) if block.match_subject else None
    about = (
        index.about(asked_people)
        if asked_people is not None and asks_about_one_of_them(asked_people)
        else set()
    )
    positions.update(about)
    signals = _Signals(
        raw=index.raw_scores(terms),
        ideal=ideal,
        concept_of=parts_scorer(parts) if asked else None,
        classes=index.concepts if asked else (),
        semantic_of=_semantic_of(query_embedding, embeddings, semantic_scores),
        bonus_only=bool(asked) and not class_answers_alone(query, asked),
        about=about,
        subject_similarity=block.subject_similarity,
    )
    weights = block.weights or config.weights  # the block's own, where it has them
    scored = _score_positions(
        sorted(positions), candidates, signals, config, weights, mix, gate, now
    )
    unmatched = index.ids_except(positions)
    return scored, unmatched


def _semantic_of(
    query_embedding: Sequence[float] | None,
    embeddings: Mapping[str, Sequence[float]] | None,
    semantic_scores: Mapping[str, float] | None,
) -> Callable[[str], float | None] | None:
    """A candidate's vector similarity by id: the vector index's score when given, else the
    cosine with the query's embedding when both exist; None = no vectors this retrieval."""
    if semantic_scores is not None:
        return semantic_scores.get
    if query_embedding is None:
        return None
    vectors = embeddings or {}

    def cosine(cand_id: str) -> float | None:
        vector = vectors.get(cand_id)
        return None if vector is None else cosine_similarity(query_embedding, vector)

    return cosine


_MISSING: Any = object()
_BY_ID = attrgetter("id")
_BY_STRENGTH = attrgetter("score", "similarity", "recency")


def _ranked(items: list[CandidateScore]) -> list[CandidateScore]:
    """`items` best first: by score, similarity and recency descending, then by id — as two
    stable C-keyed sorts (by id, then by strength with `reverse`, which keeps equal items in
    their order) instead of a Python key call per item."""
    items.sort(key=_BY_ID)
    items.sort(key=_BY_STRENGTH, reverse=True)
    return items


def _select(
    ranked: Sequence[CandidateScore], block: BlockRetrievalConfig
) -> tuple[list[str], list[str], list[str], int]:
    """Top-k with a total char cap: (chosen, over top-k, over the cap, chars used)."""
    chosen: list[str] = []
    over_k: list[str] = []
    over_cap: list[str] = []
    chars = 0
    top_k, max_chars = block.top_k, block.max_chars
    for at, item in enumerate(ranked):
        if len(chosen) >= top_k:  # the rest are all over top-k
            over_k = [i.id for i in ranked[at:]]
            break
        if chars + item.chars > max_chars:
            over_cap.append(item.id)
        else:
            chosen.append(item.id)
            chars += item.chars
    return chosen, over_k, over_cap, chars


def retrieve(
    query: str,
    candidates: Iterable[MemoryCandidate],
    *,
    kind: str,
    now: float,
    allowed_scopes: Collection[str],
    config: ScoringConfig | None = None,
    query_embedding: Sequence[float] | None = None,
    embeddings: Mapping[str, Sequence[float]] | None = None,
    semantic_scores: Mapping[str, float] | None = None,
    scoped_cache: ScopedCache | None = None,
    population: int = 0,
) -> RetrievalResult:
    """Rank `candidates` for `query` and pick the block's items, with a full trace.

    Order of filters: scope (defence in depth; see `isolation`) → similarity gate (the block's
    `min_similarity`, raised for many candidates: `gate.similarity_gate`) → with
    `match_subject`, about someone the question does not ask about (`subjects`) → relevance
    threshold → top-k → char cap (an item that does not fit is skipped; smaller ones may follow).
    With `scoped_cache`, a candidate tuple's scope filter and index are reused across calls
    (the same results; see `ScopedCache`). `population`: how many rows the question was
    matched against when more than these candidates (the vector index's hits beyond the
    window are a few of many): the gate grows with it, not with the few passed here.
    """
    return retrieve_prepared(
        query,
        scoped_candidates(candidates, allowed_scopes, scoped_cache),
        kind=kind,
        now=now,
        config=config,
        query_embedding=query_embedding,
        embeddings=embeddings,
        semantic_scores=semantic_scores,
        population=population,
    )


def retrieve_prepared(
    query: str,
    scoped: PreparedCandidates,
    *,
    kind: str,
    now: float,
    config: ScoringConfig | None = None,
    query_embedding: Sequence[float] | None = None,
    embeddings: Mapping[str, Sequence[float]] | None = None,
    semantic_scores: Mapping[str, float] | None = None,
    population: int = 0,
) -> RetrievalResult:
    """`retrieve` over candidates already scope-filtered by `prepare_candidates` (their
    indexes kept in `scoped.indexes`, built here when missing): the same result."""
    cfg = config or ScoringConfig()
    block = cfg.block(kind)
    index_key = (cfg.bm25_k1, cfg.bm25_b)
    if index_key not in scoped.indexes:
        ids, texts = [c.id for c in scoped.kept], [c.index_text for c in scoped.kept]
        scoped.indexes[index_key] = candidate_index(ids, texts, *index_key)
    vectors = semantic_scores is not None or query_embedding is not None  # see `_semantic_of`
    gate = similarity_gate(block, max(len(scoped.kept), population), vectors=vectors)
    scored, unmatched = score_candidates(
        query,
        scoped.kept,
        now=now,
        config=cfg,
        block=block,
        query_embedding=query_embedding,
        embeddings=embeddings,
        semantic_scores=semantic_scores,
        index=scoped.indexes[index_key],
        min_similarity=gate.min_similarity,
    )
    vetoed = veto(_ranked([s for s in scored if not s.gated]), scoped.by_id, query, block)
    passed, other, instance, no_answer = vetoed
    gated = sorted((s for s in scored if s.gated), key=lambda s: (-s.similarity, s.id))
    below = [s.id for s in passed if s.score < block.threshold]
    chosen, over_k, over_cap, chars = _select(
        [s for s in passed if s.score >= block.threshold], block
    )
    trace = RetrievalTrace(
        kind=kind,
        query=query,
        query_tokens=tokenize(query),
        candidates=tuple(
            passed
            + sorted(other + instance + no_answer + gated, key=lambda s: (-s.similarity, s.id))
        ),
        chosen_ids=tuple(chosen),
        dropped_by_scope=scoped.out_of_scope,
        dropped_by_similarity=_gated_ids(gated, unmatched),
        dropped_by_threshold=tuple(below),
        dropped_by_top_k=tuple(over_k),
        dropped_by_cap=tuple(over_cap),
        dropped_by_subject=tuple(s.id for s in other),
        dropped_by_instance=tuple(s.id for s in instance),
        dropped_by_answer_type=tuple(s.id for s in no_answer),
        chars=chars,
        considered=len(scoped.kept),
        gate=gate,
    )
    by_id = scoped.by_id
    return RetrievalResult(chosen=tuple(by_id[i] for i in chosen), trace=trace)


def _gated_ids(gated: Sequence[CandidateScore], unmatched: Sequence[str]) -> tuple[str, ...]:
    """Gated ids by (−similarity, id); the unscored ones (already by id) had similarity 0."""
    if not unmatched:
        return tuple(s.id for s in gated)
    above = [s.id for s in gated if s.similarity > 0]
    zero = sorted([*(s.id for s in gated if s.similarity == 0), *unmatched])
    below = [s.id for s in gated if s.similarity < 0]
    return (*above, *zero, *below)
