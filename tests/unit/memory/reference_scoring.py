"""The retrieval scoring as it was before the inverted index (kept as the reference).

`reference_retrieve` scores every candidate and returns the full trace; the equality tests
compare `scoring.retrieve` against it. Copied verbatim from `scoring.py` at the commit that
introduced `CandidateIndex`; only names were made local. The similarity gate's growth with the
number of candidates (`gate.similarity_gate`, added later) is applied as `retrieve` applies it:
it is tested on its own (`tests/unit/ranking/test_similarity_gate.py`), this module checks the
index.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence

from pallas.features.memory.config import BlockRetrievalConfig, RetrievalConfig
from pallas.ranking.answer_type import class_answers_alone
from pallas.ranking.concepts import concept_similarity, fact_concepts, query_concepts
from pallas.ranking.gate import similarity_gate
from pallas.ranking.scoring import (
    Bm25Index,
    CandidateScore,
    MemoryCandidate,
    _select,
    concept_bonus,
    cosine_similarity,
    frequency_term,
    hybrid_similarity,
    recency_term,
    subject_raise,
)
from pallas.ranking.subjects import asks_about_one_of_them, fact_about, question_about
from pallas.ranking.text import question_parts, tokenize
from pallas.ranking.trace import RetrievalResult, RetrievalTrace


def _rank_key(item: CandidateScore) -> tuple[float, float, float, str]:
    """The ranking as it was written before the two-sort form (`scoring._ranked`)."""
    return (-item.score, -item.similarity, -item.recency, item.id)


def _score_one(
    cand: MemoryCandidate,
    bm25: float | None,
    embedding: float | None,
    *,
    now: float,
    config: RetrievalConfig,
    block: BlockRetrievalConfig,
    concept: float | None = None,
    vectors: bool = False,
    bonus_only: bool = False,
    about_asked: bool = False,
) -> CandidateScore:
    """One candidate's score as `scoring` computed it before `_score_positions` (one loop)."""
    w = block.weights or config.weights
    mix = config.embedding_weight if block.embedding_weight is None else block.embedding_weight
    sim = hybrid_similarity(bm25, embedding, mix)
    sim = concept_bonus(
        sim, concept, config, vectors=vectors, cosine=embedding, bonus_only=bonus_only
    )
    sim = subject_raise(sim, about_asked, block)
    recency = recency_term(cand.days_since_access(now), w.recency_days)
    freq = frequency_term(cand.access_count, w.frequency_divisor)
    gate = block.min_similarity
    if vectors and block.min_similarity_with_vectors is not None:
        gate = block.min_similarity_with_vectors
    gated = sim <= 0.0 or sim < gate
    score = 0.0 if gated else w.similarity * sim + w.recency * recency + w.frequency * freq
    return CandidateScore(
        cand.id, bm25, embedding, sim, recency, freq, score, len(cand.text), gated, concept
    )


def reference_scores(
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

    Similarity per candidate: BM25 (mixed with cosine when vectors exist), with the concept
    similarity as `concept_bonus` says (raised to it without vectors, added with them).
    """
    query_tokens = tokenize(query)
    index = Bm25Index(
        {c.id: tokenize(c.index_text) for c in candidates}, k1=config.bm25_k1, b=config.bm25_b
    )
    lexical = index.normalised_scores(query_tokens)
    # the whole question's classes and each clause's (`question_parts`): a fact's share is
    # its best over them
    parts = [query_concepts(p) for p in question_parts(query)] if config.concept_weight > 0 else []
    asked = frozenset().union(*parts) if parts else frozenset()
    bonus_only = not class_answers_alone(query, asked)  # a bonus only (`concept_bonus`)
    people = question_about(query)  # a fact about them is raised (`subject_raise`)
    asked_people = people if people is not None and asks_about_one_of_them(people) else set()
    scored = []
    for cand in candidates:
        shares = [concept_similarity(p, fact_concepts(cand.index_text)) for p in parts if p]
        found = [v for v in shares if v is not None]
        concept = max(found) if asked and found else None
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
                vectors=semantic_scores is not None or query_embedding is not None,
                bonus_only=bonus_only,
                about_asked=bool((fact_about(cand.index_text) or set()) & asked_people),
            )
        )
    return scored


def reference_retrieve(
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
    vectors = semantic_scores is not None or query_embedding is not None
    gate = similarity_gate(block, len(by_id), vectors=vectors)
    block = block.model_copy(
        update={"min_similarity": gate.min_similarity, "min_similarity_with_vectors": None}
    )
    scored = reference_scores(
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
        gate=gate,
    )
    return RetrievalResult(chosen=tuple(by_id[i] for i in chosen), trace=trace)


# the person-facts vetoes, which the reference does not apply (they have tests of their own)
VETOES_OFF = {"match_subject": False, "match_instance": False, "match_answer_type": False}


def scoring_only(config: RetrievalConfig) -> RetrievalConfig:
    """`config` without the person-facts vetoes, to compare a retrieval with the reference."""
    block = config.person_facts.model_copy(update=VETOES_OFF)
    return config.model_copy(update={"person_facts": block})
