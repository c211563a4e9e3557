"""`LearningConfig`: every tunable of group learning (global default, overridable per group).

The settings layer reads it from env / `config/groups/*.toml`; `with_overrides` applies one
group's table on top of the global values and reports a bad field like any pydantic model.
The `*_options()` helpers hand the pure modules their frozen option values.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from pallas.core.config_files import DEFAULT_ONLY

from .injection_feedback import DEFAULT_NEGATIVE_WORDS
from .pairs import PairOptions
from .reply_shape import ShapeBounds, ShapeOptions
from .scheduler import SchedulerOptions
from .semantic_style import ExpressionOptions
from .text import DEFAULT_BLOCKED_WORDS, DEFAULT_COMMAND_PREFIXES


def _deep_merge(base: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """`overrides` on top of `base`; nested tables merge key by key."""
    merged = dict(base)
    for key, value in overrides.items():
        current = merged.get(key)
        if isinstance(current, Mapping) and isinstance(value, Mapping):
            merged[key] = _deep_merge(current, value)
        else:
            merged[key] = value
    return merged


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class BlameWeights(_Strict):
    """Penalty per injected source kind when an admin rejects a bot line (halving every 30 days)."""

    ambient: float = Field(-1.0, le=0)  # penalty for ambient lines
    expression: float = Field(-3.0, le=0)  # penalty for expression guidance
    semantic: float = Field(-2.0, le=0)  # penalty for semantic style
    memory: float = Field(-1.0, le=0)  # penalty for memory
    bot_line: float = Field(-1.0, le=0)  # the rejected line itself (kept out of ambient pools)

    def as_mapping(self) -> dict[str, float]:
        return self.model_dump()


class ShapeBoundsConfig(_Strict):
    min_segments: int = Field(ge=1, le=6)  # fewest bubbles
    max_segments: int = Field(ge=1, le=6)  # most bubbles
    min_chars: int = Field(ge=1, le=400)  # shortest bubble
    max_chars: int = Field(ge=1, le=400)  # longest bubble

    @model_validator(mode="after")
    def _ordered(self) -> ShapeBoundsConfig:
        if self.min_segments > self.max_segments or self.min_chars > self.max_chars:
            raise ValueError("min must not exceed max")
        return self

    def bounds(self) -> ShapeBounds:
        return ShapeBounds(self.min_segments, self.max_segments, self.min_chars, self.max_chars)


class ShapeConfig(_Strict):
    # reply shape for casual chat
    casual: ShapeBoundsConfig = ShapeBoundsConfig(
        min_segments=1, max_segments=3, min_chars=4, max_chars=18
    )
    # reply shape for questions and requests
    non_casual: ShapeBoundsConfig = ShapeBoundsConfig(
        min_segments=1, max_segments=2, min_chars=8, max_chars=80
    )
    # reply shape for tool answers
    tool: ShapeBoundsConfig = ShapeBoundsConfig(
        min_segments=1, max_segments=2, min_chars=8, max_chars=160
    )
    hard_max_segments: int = Field(3, ge=1, le=6)  # bubbles never exceed this
    casual_max_chars_clamp: tuple[int, int] = (8, 30)  # learned casual max_chars kept in this range
    # learned non-casual max_chars kept in this range
    non_casual_max_chars_clamp: tuple[int, int] = (40, 120)
    non_casual_chars_factor: float = Field(3.0, gt=0)  # non-casual max_chars = casual × this
    # share of one-line turns that makes replies one bubble
    single_share_for_single: float = Field(0.7, ge=0, le=1)
    # below this share replies may be a burst of bubbles
    single_share_for_burst: float = Field(0.4, ge=0, le=1)


class LearningConfig(_Strict):
    # switches
    collect_enabled: bool = True  # false: learn nothing from this group
    inject_enabled: bool = True  # false: learned style is not put in prompts
    # several accounts in one group: only this one collects (0 / unset: chosen automatically,
    # `collector.choose_collector`)
    collector_bot_id: int | None = None
    other_bot_ids: tuple[int, ...] = ()  # known bots whose lines are never learned
    # sweep: one sweep runs for every group, so its interval and job cap are process-wide,
    # read from default.toml only (a group file setting them is rejected)
    sweep_interval_seconds: int = Field(1200, ge=60, json_schema_extra=DEFAULT_ONLY)
    label_batch_size: int = Field(40, ge=1, le=40)  # pairs labelled per model call
    max_jobs_per_sweep: int = Field(8, ge=1, json_schema_extra=DEFAULT_ONLY)
    max_scan_rows: int = Field(400, ge=10)  # new messages read per sweep
    history_rows: int = Field(200, ge=0)  # rows before the cursor read as triggers only
    label_max_attempts: int = Field(3, ge=1)  # unusable answers before a batch is skipped
    daily_call_budget: int = Field(48, ge=0)  # learning model calls per group per day
    daily_token_budget: int = Field(150_000, ge=0)  # learning tokens per group per day
    budget_utc_offset_hours: float = 8.0  # the budget day's time zone (8 = Beijing)
    # pairs
    adjacency_gap_seconds: float = Field(120.0, gt=0)  # a reply within this time forms a pair
    pair_max_chars: int = Field(80, ge=4)  # longer lines are not learned
    # lines with these words are never learned
    blocked_words: tuple[str, ...] = DEFAULT_BLOCKED_WORDS
    # lines starting with these are commands, not chat
    command_prefixes: tuple[str, ...] = DEFAULT_COMMAND_PREFIXES
    # expression guidance and strategies
    expression_max_pairs: int = Field(2, ge=0, le=5)  # expression examples per prompt
    expression_min_similarity: float = Field(0.2, ge=0, le=1)  # weaker matches are not shown
    strategy_max_observed: int = Field(3, ge=0, le=5)  # observed strategies per prompt
    strategy_max_reflection: int = Field(3, ge=0, le=5)  # reflection strategies per prompt
    strategy_min_support: int = Field(1, ge=1)  # observations before a strategy is used
    strategy_half_life_days: float = Field(14.0, gt=0)  # a strategy's weight halves in this time
    expression_pool_size: int = Field(2000, ge=0)  # newest observed pairs recalled from
    cache_ttl_seconds: float = Field(600.0, ge=0)  # per-group cache of the reply path
    # reply shape
    turn_gap_seconds: float = Field(20.0, gt=0)  # lines further apart start a new turn
    min_samples: int = Field(30, ge=1)  # turns before the learned profile replaces defaults
    profile_rows: int = Field(2000, ge=10)  # newest messages the reply profile is built from
    profile_refresh_rows: int = Field(200, ge=1)  # new rows before the profile is rebuilt
    profile_refresh_seconds: float = Field(21_600.0, gt=0)  # … or after this long
    shape: ShapeConfig = ShapeConfig()  # reply shape bounds
    # negative feedback: an admin's words that reject a bot line
    feedback_negative_words: tuple[str, ...] = DEFAULT_NEGATIVE_WORDS
    feedback_admin_ids: tuple[int, ...] = ()  # superusers counted as admins everywhere
    blame_weights: BlameWeights = BlameWeights()  # penalty per source kind on rejection
    feedback_half_life_days: float = Field(30.0, gt=0)  # a rejection's weight halves in this time
    feedback_block_threshold: float = Field(0.5, gt=0)  # weight at which a source is blocked
    feedback_min_phrase_chars: int = Field(3, ge=1)  # shorter rejected phrases block nothing
    feedback_recall: bool = True  # recall the rejected bot line when QQ allows it

    def with_overrides(self, overrides: Mapping[str, Any]) -> LearningConfig:
        """This config with one group's overrides applied (validated; unknown keys rejected)."""
        return LearningConfig.model_validate(_deep_merge(self.model_dump(), overrides))

    def pair_options(self) -> PairOptions:
        return PairOptions(
            adjacency_gap_seconds=self.adjacency_gap_seconds,
            max_chars=self.pair_max_chars,
            blocked_words=self.blocked_words,
            command_prefixes=self.command_prefixes,
            other_bot_ids=frozenset(self.other_bot_ids),
        )

    def expression_options(self) -> ExpressionOptions:
        return ExpressionOptions(
            max_pairs=self.expression_max_pairs,
            min_similarity=self.expression_min_similarity,
            min_rhythm_samples=self.min_samples,
        )

    def shape_options(self) -> ShapeOptions:
        shape = self.shape
        return ShapeOptions(
            casual=shape.casual.bounds(),
            non_casual=shape.non_casual.bounds(),
            tool=shape.tool.bounds(),
            min_samples=self.min_samples,
            hard_max_segments=shape.hard_max_segments,
            casual_max_chars_clamp=shape.casual_max_chars_clamp,
            non_casual_max_chars_clamp=shape.non_casual_max_chars_clamp,
            non_casual_chars_factor=shape.non_casual_chars_factor,
            single_share_for_single=shape.single_share_for_single,
            single_share_for_burst=shape.single_share_for_burst,
        )

    def scheduler_options(self) -> SchedulerOptions:
        return SchedulerOptions(
            batch_size=self.label_batch_size,
            max_scan_rows=self.max_scan_rows,
            max_jobs_per_sweep=self.max_jobs_per_sweep,
            daily_call_budget=self.daily_call_budget,
            daily_token_budget=self.daily_token_budget,
        )
