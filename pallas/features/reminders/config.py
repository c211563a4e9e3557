"""`[reminders]` group config: whether members may set reminders here, and the limits."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ReminderConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = Field(
        default=True, description="是否接受群友设置提醒（关闭后回复“本群没开提醒”）"
    )
    max_active_per_member: int = Field(
        default=10, ge=1, le=100, description="每位群友在本群同时有效的提醒上限"
    )
    max_repeating_per_group: int = Field(
        default=20, ge=0, le=500, description="本群同时有效的重复提醒上限（所有人合计）"
    )
    min_repeat_minutes: int = Field(
        default=60, ge=1, le=10_080, description="重复提醒的最短间隔（分钟），防止刷屏"
    )
    grace_minutes: float = Field(
        default=30, ge=0, le=1_440,
        description="机器人离线期间到期的提醒：迟到不超过这么多分钟就补发并说明，否则告诉本人错过了",
    )  # fmt: skip
    max_days_ahead: int = Field(default=366, ge=1, le=3_660, description="最远可以提前多少天设置")
    max_text_chars: int = Field(default=100, ge=10, le=500, description="提醒内容的最大字数")
    pace_s: float = Field(
        default=1.5, ge=0, le=60, description="同一群同一账号连续发出两条提醒的最小间隔（秒）"
    )
    model_fallback: bool = Field(
        default=True, description="规则读不懂时间时，是否请便宜模型理解（结构化输出）"
    )
    persona_phrasing: bool = Field(
        default=False,
        description="到点时用便宜模型以人设口吻说一句提醒（必须原样包含提醒内容，否则照原文发）",
    )
    model_timeout_s: float = Field(default=4.0, ge=0.5, le=30, description="便宜模型最多等几秒")
    model_daily_tokens: int = Field(
        default=20_000, ge=0, description="本群每天用于理解提醒时间的便宜模型 token 上限"
    )
