"""Scoring knobs (pydantic, all defaulted): relevance weights, BM25 and the per-block limits.

Every block kind of the context (group memory, events, IP knowledge, teachings, knowledge
sources, relationship notes, person facts, old topics) has its own top-k, char cap, relevance
threshold and similarity gate. `ScoringConfig` holds what `scoring` reads; the memory store's
`RetrievalConfig` (`[memory]` in a group's TOML) extends it with its own keys.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class RelevanceWeights(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    similarity: float = Field(default=0.6, ge=0)
    recency: float = Field(default=0.3, ge=0)
    frequency: float = Field(default=0.1, ge=0)
    recency_days: float = Field(default=7.0, gt=0)  # e-folding time of exp(−days/recency_days)
    frequency_divisor: float = Field(default=5.0, gt=0)  # log(count+1)/divisor, capped at 1


class BlockRetrievalConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    top_k: int = Field(default=5, ge=0)
    max_chars: int = Field(default=600, ge=0)  # total chars of the chosen texts in the block
    threshold: float = Field(default=0.3, ge=0)  # minimum relevance
    min_similarity: float = Field(default=0.25, ge=0, le=1)  # gate before recency/frequency
    # ... when the retrieval has vectors and the block mixes them differently (its own
    # `embedding_weight`, which moves every fused similarity); None: `min_similarity`.
    min_similarity_with_vectors: float | None = Field(default=None, ge=0, le=1)
    # With vectors and more than `gate_size` candidates, the gate rises by gate_growth ×
    # ln(candidates / gate_size): the best of more unrelated facts scores higher
    # (`pallas.ranking.gate`). 0: the gate is `min_similarity` whatever the number.
    gate_growth: float = Field(default=0.0, ge=0, le=0.5)
    gate_size: int = Field(default=50, ge=1)
    # A candidate about one of the member's people ("TA女儿…") is gated out when the question
    # asks about the member or about someone else of theirs, and one naming none of the
    # people a question asks about ("我老婆叫什么") likewise (`pallas.ranking.subjects`).
    match_subject: bool = False
    # With it, a candidate about the person a question asks about ("TA女儿三岁了" for "我闺女
    # 今年多大") has at least this similarity: it passes the gate however the encoder places
    # the relation's synonym (person facts: 0.5, which clears their gate grown at 200 facts).
    subject_similarity: float = Field(default=0.45, ge=0, le=1)
    # A candidate naming another instance of a class than the question names ("TA养了一只猫"
    # for "我的狗叫什么", "过年" for "生日": `pallas.ranking.instances`) is gated out unless its
    # cosine is at least `instance_min_cosine` (the encoder finds it very close anyway).
    match_instance: bool = False
    instance_min_cosine: float = Field(default=0.7, ge=0, le=1)
    # With it, a yes-or-no question naming an instance ("我喜欢吃包子吗") asks about that one:
    # a candidate with a cosine but naming no instance of its class ("TA冬天喜欢吃糖葫芦",
    # sharing only 喜欢吃) is gated out unless its cosine is at least this.
    yes_no_min_cosine: float = Field(default=0.6, ge=0, le=1)
    # A candidate telling no number for a question asking one ("我几岁了" → "TA过年喜欢守岁",
    # `pallas.ranking.answer_type`) is gated out unless its cosine is at least
    # `answer_type_min_cosine`.
    match_answer_type: bool = False
    answer_type_min_cosine: float = Field(default=0.7, ge=0, le=1)
    # With the local encoder, the question's vector reweighted by the adapter fitted for that
    # encoder (`pallas.ranking.adapter`; the stored facts' vectors untouched); false, or no
    # adapter for the active model: the plain cosine.
    question_adapter: bool = False
    # This block's relevance weights (similarity / recency / frequency) when not the
    # retrieval's own (`ScoringConfig.weights`); None: the retrieval's.
    weights: RelevanceWeights | None = None
    # This block's share of the cosine when both it and BM25 exist, when not the retrieval's
    # own (`ScoringConfig.embedding_weight`); None: the retrieval's.
    embedding_weight: float | None = Field(default=None, ge=0, le=1)


# Stored memory kinds hold *stable* facts (preferences, group rules, lore): there the threshold
# is w_sim × min_similarity (0.6 × 0.25), so anything past the similarity gate qualifies and
# age only ranks. With the generic 0.3, a fact unused for a few weeks (recency ≈ 0) would need
# similarity ≥ 0.5 to be recalled at all — "forgets what you said last week". Measured by
# `benchmarks/memory_quality.py` (person-fact recall 50 % → 77.5 %, same tokens). The gate
# itself stays at 0.25: at 0.2, "小明喜欢吃什么" already pulls in "小红喜欢猫".
_STABLE = {"threshold": 0.15}
_PERSON_GATE = {  # see person_facts
    "min_similarity": 0.35,
    "min_similarity_with_vectors": 0.43,
    "gate_growth": 0.04,
    "gate_size": 50,
    "match_subject": True,
    "match_instance": True,
    "match_answer_type": True,
}

# Per-kind defaults; a partial override (e.g. only `top_k` in a group's TOML) keeps the rest.
BLOCK_DEFAULTS: dict[str, dict[str, Any]] = {
    "group_memory": {"top_k": 5, "max_chars": 600, **_STABLE},
    "group_events": {"top_k": 3, "max_chars": 400, **_STABLE},
    "ip_knowledge": {"top_k": 4, "max_chars": 600, **_STABLE},
    "teachings": {"top_k": 4, "max_chars": 400, **_STABLE},
    "knowledge": {"top_k": 3, "max_chars": 800, **_STABLE},
    # About the speaker: the relevant ones first, then the rest of theirs up to these caps
    # (`personal_fallback_k`), so a member's facts reach the model as the budget allows —
    # not two of them whatever was asked (`benchmarks/taught_facts.py`).
    "relationship": {"top_k": 6, "max_chars": 300, **_STABLE},
    # gate 0.35, not 0.25: with the vectors in the speaker's voice (`speaker_voice`) every
    # cosine of a member's own facts is higher. Dev half (`benchmarks.member_recall`), fact in
    # the first five / negative controls empty, main → this: 10 facts 65/85 → 73/85 %, 50 facts
    # 65/69 → 73/77 %, 200 facts 56/38 → 65/46 %. 0.30 gave 82/77 % at 50 but 75/8 % at 200.
    # Above 50 facts it grows by 0.04 × ln(facts / 50) (0.405 at 200): the tail scale of a
    # never-said question's similarities, measured on the dev half (`pallas.ranking.gate`).
    # A fact about one of the member's people passes only for a question about that person
    # (`match_subject`): dev half, negatives empty 81 → 89 % at 10 facts, 78 → 85 % at 50.
    # And a question about one of them is answered only by a fact naming them: the third dev
    # set (`benchmarks._member_recall_extra2`), negatives empty 67 → 71 % at 50 facts, 71 →
    # 75 % at 200, no fact lost on any dev set (docs/providers.md, "Sixth pass").
    # A fact naming another instance of a class than the question ("过年" for "生日", "体重"
    # for "身高") passes only with a cosine of 0.7 (`match_instance`): dev half, negatives empty
    # 89 → 93 % at 10 facts, 85 → 89 % at 50, 74 → 85 % at 200, the facts kept unchanged (at
    # any floor from 0.4; the extra dev members, `benchmarks._member_recall_extra`: 56 → 69 %
    # at 50 facts with 0.5, → 81 % with 0.7, the facts kept unchanged at either).
    # A fact telling no number for a question asking one ("我几岁了" → "TA过年喜欢守岁") passes
    # only with a cosine of 0.7 (`match_answer_type`): dev half, negatives empty 93 → 100 %
    # at 10 facts, 89 → 96 % at 50, 85 → 89 % at 200, the facts kept unchanged (also ungated).
    # Ranked by meaning, age only between near-equals (similarity / recency / frequency 0.6 /
    # 0.05 / 0.02, not 0.3 / 0.1): a member teaches over months and every reply touches the
    # facts it chose, so with 0.3 a fact taught this week, or one chosen often, came before
    # the one the question asks about. Dev sets taught over 120 days with 60 earlier replies
    # a member (`benchmarks.member_recall_ages`): acc@1 78 → 80 % at 50 facts, 68 → 71 % at
    # 200; unchanged when every fact is taught the same day.
    # With the question adapter the cosine earns more of the fused similarity: 0.9 of it, not
    # the retrieval's 0.7, with the gate at 0.43, not 0.35 (the mix raises every similarity;
    # without vectors the similarity is BM25 or a class share, and the gate stays 0.35),
    # and the subject raise at 0.5 so that it clears the gate grown at 200 facts (0.486).
    # Each dev set scored by an adapter fitted on the others (`fit_question_adapter --loso`,
    # pooled), acc@1 / kept / negatives empty: 10 facts 88/90/90 → 87/90/90 %, 50 facts
    # 82/89/81 → 85/90/80 %, 200 facts 71/80/76 → 74/82/79 % (docs/providers.md, eleventh
    # pass). At 1.0 the negatives clear only at gates that cut more facts than 0.9 does.
    "person_facts": {
        "top_k": 16,
        "max_chars": 360,
        **_STABLE,
        **_PERSON_GATE,
        "weights": RelevanceWeights(recency=0.05, frequency=0.02),
        "question_adapter": True,
        "embedding_weight": 0.9,
        "subject_similarity": 0.5,
    },
    "old_topics": {"top_k": 2, "max_chars": 500},
}
BLOCK_KINDS: tuple[str, ...] = tuple(BLOCK_DEFAULTS)

_DEFAULT_BLOCKS = {k: BlockRetrievalConfig(**v) for k, v in BLOCK_DEFAULTS.items()}


class ScoringConfig(BaseModel):
    """What `scoring` reads: the fusion weights, BM25's k1 / b, the cosine share and concept
    recall. A block kind's limits come from `block`: the config's own field when it has one
    (`RetrievalConfig` does), else the kind's defaults."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    weights: RelevanceWeights = Field(default_factory=RelevanceWeights)
    bm25_k1: float = Field(default=1.5, ge=0)
    bm25_b: float = Field(default=0.75, ge=0, le=1)
    # Share of the cosine when both it and BM25 exist. 0.7 and, with vectors, a concept weight
    # of 0.5 were measured on the member-recall development half (issue #47,
    # `benchmarks/member_recall_fusion.py`; docs/providers.md): 50 facts a member, acc@1 / rec@5
    # 69 / 91 % at 0.5 + 0.8, 73 / 91 % at 0.7 + 0.5; 200 facts, 53 / 80 % and 56 / 84 %.
    embedding_weight: float = Field(default=0.7, ge=0, le=1)
    # Concept recall (semantic classes, no model): similarity = max(lexical, this × concept
    # share). 0 turns it off. See `pallas.ranking.concepts`.
    concept_weight: float = Field(default=0.8, ge=0, le=1)
    # ... when the retrieval has vectors (the memory service swaps it in): the cosine already
    # covers much of what the concept table guesses, and its full-share matches were most of
    # the false recalls measured
    concept_weight_with_vectors: float = Field(default=0.5, ge=0, le=1)
    # With vectors, the concept share also adds this × the share to the fused similarity, and
    # the raise above applies only where the cosine is at least `concept_min_cosine` (the
    # encoder does not call the fact unrelated): `scoring.concept_bonus`, measured on the
    # member-recall dev half (`benchmarks/member_recall_gate.py`, docs/providers.md)
    concept_bonus_with_vectors: float = Field(default=0.1, ge=0, le=1)
    concept_min_cosine: float = Field(default=0.25, ge=0, le=1)

    def block(self, kind: str) -> BlockRetrievalConfig:
        if kind not in BLOCK_DEFAULTS:
            raise KeyError(f"unknown retrieval block kind: {kind!r}")
        block = getattr(self, kind, None)
        if isinstance(block, BlockRetrievalConfig):
            return block
        return _DEFAULT_BLOCKS[kind]
