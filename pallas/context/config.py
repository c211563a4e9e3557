"""Tunables of the REPLY context (nested as `[context]` in the per-group config files).

Defaults: a 12,000-character budget, 18 own session turns, 8 ambient-excerpt turns.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from pallas.context.prompt_overrides import PromptOverrideConfig
from pallas.providers.formatter import FormatterConfig


class ContextConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    # 字符预算: llm_chat_char_budget, system prompt + messages
    char_budget: int = Field(default=12000, ge=500)
    # token budget override; None → model context window minus reserved output
    token_budget: int | None = Field(default=None, ge=256)
    # a partially kept message/block keeps at least this many characters of its head
    partial_keep_min_chars: int = Field(default=24, ge=1)

    # messages 序列
    session_user_window: int = Field(default=18, ge=1)  # llm_session_user_window
    session_group_window: int = Field(default=8, ge=0)  # llm_session_group_window
    ambient_line_cap: int = Field(default=120, ge=8)  # characters per 【群环境摘录】 line
    ambient_block_cap: int = Field(default=1200, ge=40)  # characters of the whole 【群环境摘录】
    # the member's message cut to this length
    user_message_max_chars: int = Field(default=2000, ge=40)

    # 群聊相邻语境
    timeline_width: int = Field(default=8, ge=0)  # @ / alias / follow-up triggers
    timeline_ambient_width: int = Field(default=4, ge=0)  # ambient perception
    timeline_line_cap: int = Field(default=240, ge=16)  # characters per timeline line
    timeline_block_cap: int = Field(default=2400, ge=64)  # characters of the whole timeline
    timeline_max_images: int = Field(default=3, ge=0)  # images described in the timeline

    # system prompt
    block_max_chars: int = Field(default=4000, ge=64)  # per-section sanitiser cap

    # pipeline
    processor_order: list[str] = Field(default_factory=list)  # reorder optional processors by id
    # processors switched off (core ones cannot be)
    disabled_processors: list[str] = Field(default_factory=list)
    # replace / append / disable a section
    prompt_overrides: list[PromptOverrideConfig] = Field(default_factory=list)
    # how messages are shaped for the endpoint
    formatter: FormatterConfig = Field(default_factory=FormatterConfig)
    # "cache": stable head → session history → this turn's blocks → the message, so providers'
    # prefix caches hit (`context/cache_layout.py`); "spec": every section in one system
    # message before the history, as the specification lays it out
    prompt_layout: Literal["cache", "spec"] = "cache"
