"""Tunables of index-time expansion (``[memory.expansion]`` in a group's TOML)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


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
