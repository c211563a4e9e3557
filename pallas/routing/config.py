"""Routing tunables: one pydantic model per stage, nested in `RoutingConfig`.

Every field has a default (the figures in docs/configuration.md), so the
model can be nested into the per-group config that is merged from TOML files. `extra="forbid"`
turns a typo in an admin file into a reported error instead of a silently ignored key.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TriggerConfig(_Section):
    """How a message can call the bot (@, alias / nickname, reply to the bot, follow-up)."""

    extra_aliases: tuple[str, ...] = ()  # added to the persona aliases and NICKNAME
    alias_anywhere: bool = True  # an alias inside the text counts as a mention (+35)
    follow_up_window_s: float = Field(default=90.0, ge=0)  # after the bot answered this user
    # ...unless this many other members' lines came since: a busy group has moved on, and the
    # member's next line is for the group (counted in the `social.recent_lines` kept).
    follow_up_max_others: int = Field(default=6, ge=1)
    known_bot_messages: int = Field(default=64, ge=1)  # bot message ids kept for reply_to_bot
    timeline_width_addressed: int = Field(default=8, ge=0)  # @ / alias / reply / follow-up
    timeline_width_ambient: int = Field(default=4, ge=0)  # timeline lines shown for an ambient turn


class AmbientConfig(_Section):
    """Ambient perception: the bot occasionally joins a conversation nobody addressed to it."""

    enabled: bool = True  # false: never join unaddressed chatter
    rate: float = Field(default=0.08, ge=0, le=1)  # chance per eligible message
    cooldown_s: float = Field(default=120.0, ge=0)  # seconds between two ambient turns
    budget: int = Field(default=2, ge=0)  # ambient engagements per window
    budget_window_s: float = Field(default=900.0, gt=0)  # the window `budget` counts in


class GateConfig(_Section):
    """reply_gate hard filter."""

    min_chars: int = Field(default=3, ge=0)  # shorter non-addressed text is skipped ("short")
    skip_media_only: bool = True  # non-addressed sticker / face / image without text
    skip_bystander: bool = True  # @ someone else and not the bot
    silence_min_s: float = Field(default=30.0, ge=0)  # after 闭嘴 / 别说话 / 安静
    silence_max_s: float = Field(default=300.0, ge=0)  # upper end of the random silence after 闭嘴
    shut_up_max_chars: int = Field(default=16, ge=1)  # longer texts are not shut-up requests

    @model_validator(mode="after")
    def _silence_range(self) -> GateConfig:
        if self.silence_max_s < self.silence_min_s:
            raise ValueError("silence_max_s must be >= silence_min_s")
        return self


class CooldownConfig(_Section):
    """Per-group chat cooldown, concurrency and accumulation of messages seen meanwhile."""

    # per group: pause between turns the bot starts itself
    chat_cooldown_s: float = Field(default=3.0, ge=0)
    max_concurrency: int = Field(default=2, ge=1)  # reply turns running at once per group
    queue_size: int = Field(default=8, ge=0)  # waiting turns before new ones are dropped
    accumulate_max: int = Field(default=8, ge=1)  # messages kept for the next trigger
    # accumulated messages older than this are dropped
    accumulate_ttl_s: float = Field(default=120.0, gt=0)
    silence_breakable_by_address: bool = True  # an explicit @ still gets an answer
    # An @ during the chat cooldown: answered at once (false), or when the cooldown ends (true).
    addressed_waits_cooldown: bool = False
    turn_timeout_s: float = Field(default=120.0, gt=0)  # in-flight marker lifetime per member
    dedupe_ttl_s: float = Field(default=600.0, gt=0)  # a re-delivered message id is ignored


class NecessityConfig(_Section):
    """reply_necessity additive score; weights are points, the turn proceeds at >= threshold."""

    threshold: int = 50  # the turn goes on at this score or more
    to_me: int = 55  # points for @ / reply to the bot
    mention: int = 35  # points for the bot's name or alias in the text
    follow_up: int = 25  # points for a follow-up within the window
    ambient: int = 50  # an ambient roll counts as a soft invitation (no reference figure)
    request: int = 25  # points for a request (帮我 / 能不能 …)
    question: int = 20  # points for a question
    back_and_forth: int = 15  # points while the member and the bot are talking
    bystander: int = -45  # points for @ someone else
    noise: int = -40  # points for noise (哈哈哈 / 666)
    spam: int = -50  # points for spam / ads
    short_reaction: int = -25  # points for a short reaction
    low_social: int = -35  # points for short social talk (greeting, thanks)
    per_recent_bot_reply: int = -8  # points per recent bot reply in the group
    recent_bot_reply_cap: int = Field(default=6, ge=0)  # recent bot replies counted at most
    low_affinity_max: int = -30  # at affinity 0; scales linearly to 0 at low_affinity_pivot
    # affinity above which no low-affinity penalty
    low_affinity_pivot: float = Field(default=0.5, gt=0, le=1)
    recent_window_s: float = Field(default=300.0, gt=0)  # "recent bot replies" in the group
    back_and_forth_window_s: float = Field(default=300.0, gt=0)  # seconds a back-and-forth lasts
    back_and_forth_min_replies: int = Field(default=1, ge=1)  # bot replies to this user
    low_social_max_chars: int = Field(default=24, ge=0)  # longer text is not low_social


class QuoteConfig(_Section):
    """Native QUOTE delivery for replies to a recent candidate message."""

    enabled: bool = True  # false: never send a native QQ quote
    cooldown_s: float = Field(default=120.0, ge=0)  # seconds between two quotes
    probability: float = Field(default=0.25, ge=0, le=1)  # chance to quote when a candidate matches
    candidates: int = Field(default=6, ge=1)  # deque maxlen per group
    candidate_ttl_s: float = Field(default=600.0, gt=0)  # whole list expires when idle


class SocialFitConfig(_Section):
    """Restraint in groups nobody addresses the bot in (`ambient_stake`, daily cap)."""

    enabled: bool = True  # False: no stake rules (every soft trigger may go on)
    long_post_chars: int = Field(default=80, ge=1)  # longer unaddressed text is a pasted post
    thread_window_s: float = Field(default=90.0, ge=0)  # two-person exchange / follow-on window
    short_follow_on_chars: int = Field(default=6, ge=0)  # "哪一关" right after another member
    recent_lines: int = Field(default=8, ge=2)  # member lines kept for the thread rules
    topic_keys: tuple[str, ...] = ()  # topics the persona has a stake in ("明日方舟", "干员")
    daily_unprompted_cap: int = Field(default=6, ge=0)  # unaddressed REPLY + phrases per day
    day_offset_hours: float = Field(default=8.0, ge=-12, le=14)  # the group's day: UTC+8


class LowEngagementConfig(_Section):
    """PASS exit: maybe one <=12-char local phrase, never an LLM call."""

    enabled: bool = True  # false: PASS is always silent
    # (minimum recent bot replies, probability), ascending: 0→0.35, 1–2→0.20, 3–4→0.10, ≥5→0.05
    probability_steps: tuple[tuple[int, float], ...] = ((0, 0.35), (1, 0.20), (3, 0.10), (5, 0.05))
    max_chars: int = Field(default=12, ge=1)  # longest local phrase
    use_group_expressions: bool = True  # phrases may come from the group's learned expressions
    soft_pool: tuple[str, ...] | None = None  # None: built-in pool (phrases.SOFT_POOL)
    emotion_pool: tuple[str, ...] | None = None  # None: phrases.EMOTION_TANGENT_POOL
    emoji_pool: tuple[str, ...] | None = None  # None: phrases.EMOJI_POOL
    good_news_pool: tuple[str, ...] | None = None  # None: phrases.GOOD_NEWS_POOL
    surprise_pool: tuple[str, ...] | None = None  # None: phrases.SURPRISE_POOL
    warm_pool: tuple[str, ...] | None = None  # None: phrases.WARM_POOL
    statement_phrases: bool = False  # True: plain statements may get the soft pool (old way)
    extra_blocklist: tuple[str, ...] = ()  # added to phrases.BLOCKLIST

    @field_validator("probability_steps")
    @classmethod
    def _steps_sorted(cls, steps: tuple[tuple[int, float], ...]) -> tuple[tuple[int, float], ...]:
        counts = [count for count, _ in steps]
        if counts != sorted(counts) or len(set(counts)) != len(counts):
            raise ValueError("probability_steps must have strictly ascending counts")
        if any(not 0 <= p <= 1 for _, p in steps):
            raise ValueError("probabilities must be within 0..1")
        return steps


class ShortSocialConfig(_Section):
    """Greeting / nickname / teasing / venting turns: no persistent memory, PASS if unaddressed."""

    max_chars: int = Field(default=24, ge=0)  # greeting, teasing, thanks, acknowledgements
    venting_max_chars: int = Field(default=24, ge=0)  # 烦死了 / 唉 / 累死了


class RoutingConfig(_Section):
    """Everything routing needs for one group (nested into the per-group config)."""

    enabled: bool = True  # False: the group is disabled, routing always skips
    decisions_kept: int = Field(default=50, ge=1)  # per-group ring for "why did it (not) reply"
    # decisions older than this are dropped from the ring
    decisions_ttl_s: float = Field(default=86_400.0, gt=0)
    triggers: TriggerConfig = TriggerConfig()
    ambient: AmbientConfig = AmbientConfig()
    gate: GateConfig = GateConfig()
    cooldown: CooldownConfig = CooldownConfig()
    necessity: NecessityConfig = NecessityConfig()
    quote: QuoteConfig = QuoteConfig()
    low_engagement: LowEngagementConfig = LowEngagementConfig()
    short_social: ShortSocialConfig = ShortSocialConfig()
    social: SocialFitConfig = SocialFitConfig()
