"""Pure retrieval scoring: BM25, cosine, hybrid similarity, relevance, threshold, top-k, caps.

relevance = w_sim·sim + w_recency·exp(−days/recency_days) + w_freq·min(1, log(count+1)/5)
with the spec's defaults 0.6 / 0.3 / 0.1 and recency_days = 7 (`001` calls it a half-life; in
the formula it is the e-folding time, so the recency term halves every 7·ln 2 ≈ 4.85 days).

**Similarity gate.** Recency and frequency are bonuses for *relevant* memories, never a reason
to retrieve on their own: a candidate whose similarity is below `min_similarity` (and always one
with zero similarity) is dropped before recency/frequency are added. Without the gate a fact used
yesterday would outscore the threshold for any query at all (0.3 + 0.1 > 0.3).

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
from collections import Counter, OrderedDict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pallas.core.clock import DAY_S
from pallas.product.llm.memory.concepts import (
    concept_similarity,
    fact_concepts,
    query_concepts,
)
from pallas.product.llm.memory.retrieval_config import (
    BlockRetrievalConfig,
    RelevanceWeights,
    RetrievalConfig,
)
from pallas.product.llm.memory.text import tokenize


@dataclass(frozen=True, slots=True)
class MemoryCandidate:
    """One retrievable row (memory, event, knowledge, note, fact, topic), already loaded."""

    id: str
    text: str
    scope: str  # group scope or pool scope, see `isolation`
    kind: str  # block kind, e.g. "group_memory"
    created_at: float  # unix seconds
    last_access_at: float | None = None  # None = never retrieved; created_at is used instead
    access_count: int = 0
    subject_user_id: int | None = None
    source: str = ""  # message ids or command that produced it
    expansion: str = ""  # keywords / category / questions stored with the fact (index only)

    @property
    def index_text(self) -> str:
        """What retrieval matches against: the fact plus its stored expansion."""
        return f"{self.text} {self.expansion}" if self.expansion else self.text

    def days_since_access(self, now: float) -> float:
        last = self.last_access_at if self.last_access_at is not None else self.created_at
        return max(0.0, (now - last) / DAY_S)


# ---------------------------------------------------------------- similarity


class Bm25Index:
    """Okapi BM25 over pre-tokenised documents. Immutable after construction."""

    __slots__ = ("_avgdl", "_b", "_df", "_docs", "_k1", "_n")

    def __init__(
        self, docs: Mapping[str, Sequence[str]], *, k1: float = 1.5, b: float = 0.75
    ) -> None:
        self._k1 = k1
        self._b = b
        self._docs: dict[str, tuple[Counter[str], int]] = {
            doc_id: (Counter(tokens), len(tokens)) for doc_id, tokens in docs.items()
        }
        self._n = len(self._docs)
        total = sum(length for _, length in self._docs.values())
        self._avgdl = total / self._n if self._n else 0.0
        df: Counter[str] = Counter()
        for counts, _ in self._docs.values():
            df.update(counts.keys())
        self._df = df

    @classmethod
    def from_texts(
        cls, items: Iterable[tuple[str, str]], *, k1: float = 1.5, b: float = 0.75
    ) -> Bm25Index:
        return cls({doc_id: tokenize(text) for doc_id, text in items}, k1=k1, b=b)

    def idf(self, term: str) -> float:
        df = self._df.get(term, 0)
        return math.log(1.0 + (self._n - df + 0.5) / (df + 0.5))

    def _term_score(self, term: str, counts: Counter[str], length: int) -> float:
        tf = counts.get(term, 0)
        if tf == 0:
            return 0.0
        norm = 1.0 - self._b + self._b * (length / self._avgdl if self._avgdl else 1.0)
        return self.idf(term) * tf * (self._k1 + 1.0) / (tf + self._k1 * norm)

    def scores(self, query_tokens: Sequence[str]) -> dict[str, float]:
        """Raw BM25 score of every document (distinct query terms)."""
        terms = [t for t in dict.fromkeys(query_tokens) if t in self._df]
        return {
            doc_id: sum(self._term_score(t, counts, length) for t in terms)
            for doc_id, (counts, length) in self._docs.items()
        }

    def ideal_score(self, query_tokens: Sequence[str]) -> float:
        """Score of an average-length document holding each query term once (= Σ idf).

        A term the corpus lacks has no idf of its own; it is weighted like the query's most
        informative known term, so it still counts as "not covered" without dominating.
        """
        terms = list(dict.fromkeys(query_tokens))
        known = [self.idf(t) for t in terms if t in self._df]
        if not known:
            return 0.0
        return sum(known) + (len(terms) - len(known)) * max(known)

    def normalised_scores(self, query_tokens: Sequence[str]) -> dict[str, float]:
        """Scores in 0..1: raw / ideal_score(query), clamped (see module docstring)."""
        ideal = self.ideal_score(query_tokens)
        raw = self.scores(query_tokens)
        if ideal <= 0:
            return dict.fromkeys(raw, 0.0)
        return {doc_id: min(1.0, score / ideal) for doc_id, score in raw.items()}


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


# ---------------------------------------------------------------- selection + trace


@dataclass(frozen=True, slots=True)
class CandidateScore:
    id: str
    bm25: float | None
    embedding: float | None
    similarity: float
    recency: float
    frequency: float
    score: float  # 0.0 when gated out
    chars: int
    gated: bool = False  # similarity below the block's min_similarity: never retrieved
    concept: float | None = None  # share of the question's semantic classes (see concepts)


@dataclass(frozen=True, slots=True)
class RetrievalTrace:
    kind: str
    query: str
    query_tokens: tuple[str, ...]
    candidates: tuple[CandidateScore, ...]  # best first
    chosen_ids: tuple[str, ...]
    dropped_by_scope: tuple[str, ...] = ()
    dropped_by_similarity: tuple[str, ...] = ()
    dropped_by_threshold: tuple[str, ...] = ()
    dropped_by_top_k: tuple[str, ...] = ()
    dropped_by_cap: tuple[str, ...] = ()
    chars: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "query": self.query,
            "candidates": [
                {
                    "id": c.id,
                    "bm25": _r(c.bm25),
                    "embedding": _r(c.embedding),
                    "concept": _r(c.concept),
                    "sim": _r(c.similarity),
                    "recency": _r(c.recency),
                    "freq": _r(c.frequency),
                    "score": _r(c.score),
                    "gated": c.gated,
                }
                for c in self.candidates
            ],
            "chosen": list(self.chosen_ids),
            "dropped_by_scope": list(self.dropped_by_scope),
            "dropped_by_similarity": list(self.dropped_by_similarity),
            "dropped_by_threshold": list(self.dropped_by_threshold),
            "dropped_by_top_k": list(self.dropped_by_top_k),
            "dropped_by_cap": list(self.dropped_by_cap),
            "chars": self.chars,
        }


def _r(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


@dataclass(frozen=True, slots=True)
class RetrievalResult:
    chosen: tuple[MemoryCandidate, ...]  # best first
    trace: RetrievalTrace

    @property
    def ids(self) -> tuple[str, ...]:
        return self.trace.chosen_ids


def _score_one(
    cand: MemoryCandidate,
    bm25: float | None,
    embedding: float | None,
    *,
    now: float,
    config: RetrievalConfig,
    block: BlockRetrievalConfig,
    concept: float | None = None,
) -> CandidateScore:
    w = config.weights
    sim = hybrid_similarity(bm25, embedding, config.embedding_weight)
    if concept is not None:
        sim = max(sim, config.concept_weight * concept)
    recency = recency_term(cand.days_since_access(now), w.recency_days)
    freq = frequency_term(cand.access_count, w.frequency_divisor)
    gated = sim <= 0.0 or sim < block.min_similarity
    score = 0.0 if gated else w.similarity * sim + w.recency * recency + w.frequency * freq
    return CandidateScore(
        cand.id, bm25, embedding, sim, recency, freq, score, len(cand.text), gated, concept
    )


_INDEXES: OrderedDict[tuple[Any, ...], Bm25Index] = OrderedDict()
_INDEX_CACHE_SIZE = 32


def _index_for(candidates: Sequence[MemoryCandidate], k1: float, b: float) -> Bm25Index:
    """The BM25 index of these exact candidates, reused while the same set is retrieved from
    (a group's loaded candidates stay the same between memory writes). Bounded LRU."""
    key = (k1, b, tuple((c.id, c.index_text) for c in candidates))
    index = _INDEXES.get(key)
    if index is None:
        index = Bm25Index({c.id: tokenize(c.index_text) for c in candidates}, k1=k1, b=b)
        _INDEXES[key] = index
        if len(_INDEXES) > _INDEX_CACHE_SIZE:
            _INDEXES.popitem(last=False)
    else:
        _INDEXES.move_to_end(key)
    return index


def score_candidates(
    query: str,
    candidates: Sequence[MemoryCandidate],
    *,
    now: float,
    config: RetrievalConfig,
    block: BlockRetrievalConfig,
    query_embedding: Sequence[float] | None = None,
    embeddings: Mapping[str, Sequence[float]] | None = None,
    semantic_scores: Mapping[str, float] | None = None,
) -> list[CandidateScore]:
    """Score every candidate (BM25 statistics come from these candidates only).

    Similarity per candidate: BM25 (mixed with cosine when vectors exist), raised to
    `concept_weight` × the concept similarity when that is larger (see `concepts`).
    """
    query_tokens = tokenize(query)
    index = _index_for(candidates, config.bm25_k1, config.bm25_b)
    lexical = index.normalised_scores(query_tokens)
    asked = query_concepts(query) if config.concept_weight > 0 else frozenset()
    scored = []
    for cand in candidates:
        concept = concept_similarity(asked, fact_concepts(cand.index_text)) if asked else None
        vector = embeddings.get(cand.id) if embeddings else None
        if semantic_scores is not None:  # precomputed by the vector index
            semantic = semantic_scores.get(cand.id)
        elif query_embedding is not None and vector is not None:
            semantic = cosine_similarity(query_embedding, vector)
        else:
            semantic = None
        scored.append(
            _score_one(
                cand,
                lexical.get(cand.id),
                semantic,
                now=now,
                config=config,
                block=block,
                concept=concept,
            )
        )
    return scored


def _rank_key(item: CandidateScore) -> tuple[float, float, float, str]:
    return (-item.score, -item.similarity, -item.recency, item.id)


def _select(
    ranked: Sequence[CandidateScore], block: BlockRetrievalConfig
) -> tuple[list[str], list[str], list[str], int]:
    """Top-k with a total char cap: (chosen, over top-k, over the cap, chars used)."""
    chosen: list[str] = []
    over_k: list[str] = []
    over_cap: list[str] = []
    chars = 0
    for item in ranked:
        if len(chosen) >= block.top_k:
            over_k.append(item.id)
        elif chars + item.chars > block.max_chars:
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
    config: RetrievalConfig | None = None,
    query_embedding: Sequence[float] | None = None,
    embeddings: Mapping[str, Sequence[float]] | None = None,
    semantic_scores: Mapping[str, float] | None = None,
) -> RetrievalResult:
    """Rank `candidates` for `query` and pick the block's items, with a full trace.

    Order of filters: scope (defence in depth; see `isolation`) → similarity gate → relevance
    threshold → top-k → char cap (an item that does not fit is skipped; smaller ones may follow).
    """
    cfg = config or RetrievalConfig()
    block = cfg.block(kind)
    by_id: dict[str, MemoryCandidate] = {}
    out_of_scope: list[str] = []
    for cand in candidates:
        if cand.scope not in allowed_scopes:
            out_of_scope.append(cand.id)
        elif cand.id not in by_id:
            by_id[cand.id] = cand
    scored = score_candidates(
        query,
        list(by_id.values()),
        now=now,
        config=cfg,
        block=block,
        query_embedding=query_embedding,
        embeddings=embeddings,
        semantic_scores=semantic_scores,
    )
    gated = [s for s in scored if s.gated]
    passed = sorted((s for s in scored if not s.gated), key=_rank_key)
    below = [s.id for s in passed if s.score < block.threshold]
    chosen, over_k, over_cap, chars = _select(
        [s for s in passed if s.score >= block.threshold], block
    )
    gated.sort(key=lambda s: (-s.similarity, s.id))
    trace = RetrievalTrace(
        kind=kind,
        query=query,
        query_tokens=tokenize(query),
        candidates=tuple(passed + gated),
        chosen_ids=tuple(chosen),
        dropped_by_scope=tuple(out_of_scope),
        dropped_by_similarity=tuple(s.id for s in gated),
        dropped_by_threshold=tuple(below),
        dropped_by_top_k=tuple(over_k),
        dropped_by_cap=tuple(over_cap),
        chars=chars,
    )
    return RetrievalResult(chosen=tuple(by_id[i] for i in chosen), trace=trace)
