"""`[cost]` in the per-group config: member rate limit and daily reply budgets."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

LadderStep = Literal["drop_ambient", "shorten_context", "cheap_model", "phrase"]
DEFAULT_LADDER: tuple[LadderStep, ...] = (
    "drop_ambient",
    "shorten_context",
    "cheap_model",
    "phrase",
)

LIMIT_PHRASES = (
    "你今天问得好多呀，歇会儿再聊～",
    "让我歇会儿嘛，一会儿再陪你聊～",
    "问太快啦，歇会儿再来找我～",
)
CEILING_PHRASES = (
    "今天陪你聊了好多啦，明天接着聊～",
    "今天聊得够多啦，让我缓缓，明天见～",
)
BUDGET_PHRASES = (
    "今天说了好多话，嗓子哑了，明天再聊～",
    "今天的话说完啦，明天见～",
    "有点累了，明天再陪你聊～",
)


class MemberLimitConfig(BaseModel):
    """Per member per group. Floods: a token bucket (like nginx `limit_req rate=… burst=…`):
    up to `burst` LLM turns, refilled at `turns` per `window_s`. Conversation — a line at least
    `conversation_gap_s` after the member's previous one, which the bot answered, and not a
    repeat of it — takes no token, up to `conversation_daily_turns` a China day."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = True  # false: no per-member limit
    turns: int = Field(default=6, ge=1)  # steady rate: turns per window
    window_s: float = Field(default=600.0, gt=0)  # the window `turns` counts in
    burst: int = Field(default=4, ge=1)  # back-to-back turns a quiet member may take
    # paced conversation; 0 turns a day = every turn goes through the bucket (the old limit)
    conversation_daily_turns: int = Field(default=60, ge=0)
    # a line this long after the previous one is conversation
    conversation_gap_s: float = Field(default=8.0, ge=0)
    repeat_similarity: float = Field(default=0.9, gt=0, le=1)  # this similar = a repeat
    exempt_admins: bool = True  # group owner/admins, `admins` and superusers are not limited
    # what the bot says when a member is limited
    phrases: list[str] = Field(default_factory=lambda: list(LIMIT_PHRASES), min_length=1)
    # what the bot says at the daily conversation ceiling
    ceiling_phrases: list[str] = Field(default_factory=lambda: list(CEILING_PHRASES), min_length=1)


class BudgetConfig(BaseModel):
    """Daily reply budgets of one group (China day, as the usage ledger); 0 = no limit."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    chat_calls: int = Field(default=600, ge=0)  # reply calls without images
    chat_tokens: int = Field(default=3_000_000, ge=0)  # reply tokens without images per day
    vision_calls: int = Field(default=100, ge=0)  # reply calls that attach images
    vision_tokens: int = Field(default=1_000_000, ge=0)  # reply tokens with images per day
    warn_pct: float = Field(default=80.0, gt=0, le=100)  # warn the admins at this share
    # each ladder step after the first starts this many % above the budget
    # (100 %, 110 %, 120 %, 130 % by default); 0 = every step at once at 100 %
    step_pct: float = Field(default=10.0, ge=0, le=100)
    # steps of restraint as the budget is used
    ladder: list[LadderStep] = Field(default_factory=lambda: list(DEFAULT_LADDER))
    # shorten_context: the turn's timeline / session windows are cut to this share
    shorten_factor: float = Field(default=0.5, gt=0, le=1)
    # what the bot says when the budget is spent
    phrases: list[str] = Field(default_factory=lambda: list(BUDGET_PHRASES), min_length=1)


class CostConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = True  # false: no rate limits or budgets
    member: MemberLimitConfig = Field(default_factory=MemberLimitConfig)  # per-member rate limits
    budget: BudgetConfig = Field(default_factory=BudgetConfig)  # daily reply budgets
