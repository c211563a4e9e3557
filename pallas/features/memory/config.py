"""The memory store's config, ``[memory]`` in a group's TOML (pydantic, all defaulted).

`RetrievalConfig` is the table: the scoring knobs (`pallas.ranking.ScoringConfig`: weights,
BM25, per-block limits), the store's own keys (shared pools, candidate cap, personal fallback),
and the sub-tables of fact upkeep — ``[memory.extraction]`` (`ExtractionConfig`),
``[memory.expansion]`` (`ExpansionConfig`) and ``[memory.profile]`` (`MemberProfileConfig`).
Any field can be overridden per group in config files.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from pallas.features.memory.isolation import validate_pool_name
from pallas.ranking import (
    BLOCK_DEFAULTS,
    BLOCK_KINDS,
    BlockRetrievalConfig,
    RelevanceWeights,
    ScoringConfig,
)

__all__ = [
    "BLOCK_DEFAULTS",
    "BLOCK_KINDS",
    "BlockRetrievalConfig",
    "ExpansionConfig",
    "ExtractionConfig",
    "MemberProfileConfig",
    "RelevanceWeights",
    "RetrievalConfig",
]


# ``[memory.extraction]``: background memory extraction.
class ExtractionConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = True
    # One extraction job per this many delivered replies in a group …
    every_n_turns: int = Field(default=8, ge=1, le=1000)
    # … and never more often than this (seconds), whatever the reply rate.
    min_interval_s: float = Field(default=600.0, ge=0)
    # Group messages handed to the cheap model per job (the ones since the last job).
    max_messages: int = Field(default=40, ge=4, le=200)
    message_max_chars: int = Field(default=200, ge=20, le=2000)
    max_facts_per_job: int = Field(default=8, ge=1, le=50)
    max_output_tokens: int = Field(default=400, ge=64, le=4000)
    # Per-group daily cap on the cheap model's tokens (usage ledger, task "cheap", Asia/
    # Shanghai day). Extraction skips a job that could push the group past it.
    daily_token_budget: int = Field(default=40_000, ge=0)
    # "记住 …" from a member who has stored facts: one cheap call decides by meaning which of
    # them the new fact replaces (within the same daily budget), waiting at most this long
    # before the rules decide instead. Off: the rules alone.
    teach_judge: bool = True
    teach_timeout_s: float = Field(default=3.0, ge=0.5, le=30.0)


# ``[memory.expansion]``: index-time expansion.
class ExpansionConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    # When a memory row is stored, the cheap model adds keywords, a category and 2–3 likely
    # questions to it (searched, never shown): one background cheap call per stored row, never
    # on the reply path, within `daily_token_budget`. On by default (issue 34).
    enabled: bool = True
    max_output_tokens: int = Field(default=200, ge=64, le=2000)
    # Per-group daily cap on the cheap model's tokens (usage ledger, task "cheap", shared with
    # extraction): an expansion that could push the group past it is skipped, and the row stays
    # searchable as it is.
    daily_token_budget: int = Field(default=20_000, ge=0)
    # Block kinds that get expanded.
    kinds: tuple[str, ...] = (
        "person_facts",
        "relationship",
        "teachings",
        "group_memory",
        "group_events",
        "ip_knowledge",
        "knowledge",
    )


class MemberProfileConfig(BaseModel):
    """The speaker's facts as a compact profile (`profile.py`): the facts relevant to this turn
    (past the person-facts block's relevance gate), best first, up to `token_budget` tokens —
    a fact below the gate is never shown as if relevant, so a question about something never
    said finds nothing (issue #47). After the relevant ones, under their own label
    (`profile.ASIDE`: "未必相关"), within the same budget: a member's other facts when ALL of
    them fit (a small profile stays whole), else the `near_facts` nearest the question that
    the gate kept out (the encoder cannot tell a paraphrase's fact from an unrelated one by
    the cosine alone; the model can, told they may not apply). `token_budget = 0`: every
    live fact, relevant first, then newest, up to `max_chars` of fact text (~0.7 token a
    char) and `max_facts`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = True  # false: the relevant + newest facts, a line each (person_facts caps)
    token_budget: int = Field(default=150, ge=0, le=4000)
    near_facts: int = Field(default=3, ge=0, le=20)  # aside when not all fit (0: none)
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


class RetrievalConfig(ScoringConfig):
    """Retrieval tunables; every block kind has its own top-k / char cap / threshold."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # weights, bm25_k1, bm25_b, embedding_weight, concept_weight(_with_vectors): `ScoringConfig`
    # With embeddings on: the most rows of the vector index's nearest (to the question, over
    # every live row of the readable scopes) a block reads beyond the recent window; a block
    # reads 2 × its top-k of them, at least 8 (`embeddings.vector_depth`).
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
