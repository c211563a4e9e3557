"""Tunables of background memory extraction (``[memory.extraction]`` in a group's TOML)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


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
