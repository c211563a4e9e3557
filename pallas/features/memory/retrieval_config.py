"""Retrieval tunables (pydantic, all defaulted): relevance weights and per-block limits.

Every block kind of the context (group memory, events, IP knowledge, teachings, knowledge
sources, relationship notes, person facts, old topics) has its own top-k, char cap, relevance
threshold and similarity gate. Any field can be overridden per group in config files.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from pallas.features.memory.expansion_config import ExpansionConfig
from pallas.features.memory.extraction_config import ExtractionConfig
from pallas.features.memory.isolation import validate_pool_name


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


# Stored memory kinds hold *stable* facts (preferences, group rules, lore): there the threshold
# is w_sim × min_similarity (0.6 × 0.25), so anything past the similarity gate qualifies and
# age only ranks. With the generic 0.3, a fact unused for a few weeks (recency ≈ 0) would need
# similarity ≥ 0.5 to be recalled at all — "forgets what you said last week". Measured by
# `benchmarks/memory_quality.py` (person-fact recall 50 % → 77.5 %, same tokens). The gate
# itself stays at 0.25: at 0.2, "小明喜欢吃什么" already pulls in "小红喜欢猫".
_STABLE = {"threshold": 0.15}

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
    "person_facts": {"top_k": 16, "max_chars": 360, **_STABLE},
    "old_topics": {"top_k": 2, "max_chars": 500},
}
BLOCK_KINDS: tuple[str, ...] = tuple(BLOCK_DEFAULTS)


class MemberProfileConfig(BaseModel):
    """The speaker's facts as a compact profile (`profile.py`): every live fact, relevant
    first, then newest, up to `max_chars` of fact text (~0.7 token a char) and `max_facts`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = True  # false: the relevant + newest facts, a line each (person_facts caps)
    max_chars: int = Field(default=600, ge=0, le=4000)
    max_facts: int = Field(default=60, ge=1, le=200)
    # The cheap model merges the member's live facts into one profile in the background
    # (`consolidation_job`), within `[memory.extraction] daily_token_budget`.
    consolidate: bool = True
    consolidate_delay_s: float = Field(default=60.0, ge=0, le=86_400)  # after the last change
    consolidate_min_facts: int = Field(default=4, ge=1, le=200)
    consolidate_max_tokens: int = Field(default=1200, ge=50, le=8000)


def _block(kind: str) -> Any:
    return Field(default_factory=lambda: BlockRetrievalConfig(**BLOCK_DEFAULTS[kind]))


class RetrievalConfig(BaseModel):
    """Retrieval tunables; every block kind has its own top-k / char cap / threshold."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    weights: RelevanceWeights = Field(default_factory=RelevanceWeights)
    bm25_k1: float = Field(default=1.5, ge=0)
    bm25_b: float = Field(default=0.75, ge=0, le=1)
    embedding_weight: float = Field(default=0.5, ge=0, le=1)  # share of cosine when both exist
    # Concept recall (semantic classes, no model): similarity = max(lexical, this × concept
    # share). 0 turns it off. See `pallas.features.memory.concepts`.
    concept_weight: float = Field(default=0.8, ge=0, le=1)
    # With embeddings on: rows the vector index adds per block beyond the recent window
    # (nearest to the question over every live row of the readable scopes).
    vector_k: int = Field(default=20, ge=0, le=500)
    # Named shared pools this group also reads (``pool:<name>`` scopes); empty = own group only.
    shared_pools: tuple[str, ...] = ()
    # Rows loaded per block kind before scoring (most recently used first): bounds the work.
    candidate_cap: int = Field(default=500, ge=1, le=20_000)
    # Relationship notes / person facts are about the current speaker: when fewer than this
    # many pass the relevance gate, the most recently used remaining ones fill up (within
    # the block's top-k and char cap, which bound it in practice). 0 = strict relevance only.
    personal_fallback_k: int = Field(default=16, ge=0, le=50)
    extraction: ExtractionConfig = Field(default_factory=ExtractionConfig)
    expansion: ExpansionConfig = Field(default_factory=ExpansionConfig)
    profile: MemberProfileConfig = Field(default_factory=MemberProfileConfig)

    group_memory: BlockRetrievalConfig = _block("group_memory")
    group_events: BlockRetrievalConfig = _block("group_events")
    ip_knowledge: BlockRetrievalConfig = _block("ip_knowledge")
    teachings: BlockRetrievalConfig = _block("teachings")
    knowledge: BlockRetrievalConfig = _block("knowledge")
    relationship: BlockRetrievalConfig = _block("relationship")
    person_facts: BlockRetrievalConfig = _block("person_facts")
    old_topics: BlockRetrievalConfig = _block("old_topics")

    @field_validator("shared_pools")
    @classmethod
    def _valid_pools(cls, pools: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(dict.fromkeys(validate_pool_name(p) for p in pools))

    @model_validator(mode="before")
    @classmethod
    def _merge_block_defaults(cls, data: Any) -> Any:
        if not isinstance(data, Mapping):
            return data
        merged = dict(data)
        for kind, defaults in BLOCK_DEFAULTS.items():
            value = merged.get(kind)
            if isinstance(value, BlockRetrievalConfig):
                value = value.model_dump(exclude_unset=True)
            if isinstance(value, Mapping):
                merged[kind] = {**defaults, **value}
        return merged

    def block(self, kind: str) -> BlockRetrievalConfig:
        if kind not in BLOCK_DEFAULTS:
            raise KeyError(f"unknown retrieval block kind: {kind!r}")
        block: BlockRetrievalConfig = getattr(self, kind)
        return block
