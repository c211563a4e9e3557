"""Retrieval tunables (pydantic, all defaulted): relevance weights and per-block limits.

Every block kind of the context (group memory, events, IP knowledge, teachings, knowledge
sources, relationship notes, person facts, old topics) has its own top-k, char cap, relevance
threshold and similarity gate. Any field can be overridden per group in config files.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator


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


# Per-kind defaults; a partial override (e.g. only `top_k` in a group's TOML) keeps the rest.
BLOCK_DEFAULTS: dict[str, dict[str, Any]] = {
    "group_memory": {"top_k": 5, "max_chars": 600},
    "group_events": {"top_k": 3, "max_chars": 400},
    "ip_knowledge": {"top_k": 4, "max_chars": 600},
    "teachings": {"top_k": 4, "max_chars": 400},
    "knowledge": {"top_k": 3, "max_chars": 800},
    "relationship": {"top_k": 3, "max_chars": 300},
    "person_facts": {"top_k": 5, "max_chars": 300},
    "old_topics": {"top_k": 2, "max_chars": 500},
}
BLOCK_KINDS: tuple[str, ...] = tuple(BLOCK_DEFAULTS)


def _block(kind: str) -> Any:
    return Field(default_factory=lambda: BlockRetrievalConfig(**BLOCK_DEFAULTS[kind]))


class RetrievalConfig(BaseModel):
    """Retrieval tunables; every block kind has its own top-k / char cap / threshold."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    weights: RelevanceWeights = Field(default_factory=RelevanceWeights)
    bm25_k1: float = Field(default=1.5, ge=0)
    bm25_b: float = Field(default=0.75, ge=0, le=1)
    embedding_weight: float = Field(default=0.5, ge=0, le=1)  # share of cosine when both exist
    cache_ttl_seconds: float = Field(default=300.0, ge=0)
    cache_max_entries: int = Field(default=512, ge=0)

    group_memory: BlockRetrievalConfig = _block("group_memory")
    group_events: BlockRetrievalConfig = _block("group_events")
    ip_knowledge: BlockRetrievalConfig = _block("ip_knowledge")
    teachings: BlockRetrievalConfig = _block("teachings")
    knowledge: BlockRetrievalConfig = _block("knowledge")
    relationship: BlockRetrievalConfig = _block("relationship")
    person_facts: BlockRetrievalConfig = _block("person_facts")
    old_topics: BlockRetrievalConfig = _block("old_topics")

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
        return getattr(self, kind)
