"""Per-member limit on LLM turns: a flood bucket, and a ceiling for paced conversation.

A member talking WITH the bot is not a flood. A turn is *conversation* when the bot answered
the member's previous turn, at least `conversation_gap_s` passed since it, and the line is not
(nearly) the same as the previous one. Conversation turns take no bucket token; they count
against `conversation_daily_turns` per member per China day (the group's daily budget still
caps the total); past that ceiling paced turns take bucket tokens like any other. Every other
turn — rapid repeats, lines while the bot has not answered, the first line of a burst — takes a
token from the flood bucket.

The flood bucket of one member in one group holds at most `burst` turns and refills at
`turns / window_s` per second (GCRA / nginx `limit_req` semantics). Without a token the turn is
refused (no LLM call). The first refusal of a window carries `notify=True` (the caller sends one
local phrase); later refusals in the same window are silent.

Time is an argument. Clock jumps: a clock that went backwards refills nothing (and restarts
the bucket's timestamp at `now`); a forward jump refills at most to `burst`. A notification
timestamp in the future (clock went back) counts as expired.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from difflib import SequenceMatcher
from typing import Any

from pallas.core.state_keys import COST_MEMBER_TTL_MARGIN_S
from pallas.features.cost.config import MemberLimitConfig

ALLOWED = "member_ok"
CONVERSATION = "member_conversation"  # a paced reply to the bot: no flood token taken
EXEMPT = "member_exempt"
DISABLED = "member_limit_off"
LIMITED = "member_rate_limited"  # the flood bucket is empty
LIMITED_NOTIFY = "member_rate_limited:notified"
CEILING = "member_daily_ceiling"  # paced, but today's conversation turns are used up
CEILING_NOTIFY = "member_daily_ceiling:notified"
TEXT_KEPT = 200  # chars of the last line kept to recognise a repeat


@dataclass(frozen=True, slots=True)
class BucketState:
    tokens: float
    at: float  # when `tokens` was measured
    notified_at: float | None = None  # last over-limit phrase
    turn_at: float | None = None  # the member's last turn the guard saw (taken or refused)
    answered_at: float | None = None  # the bot's last reply call for this member
    text: str = ""  # the last turn's line, normalised (`same_line`)

    def to_json(self) -> dict[str, Any]:
        return {
            "tokens": round(self.tokens, 6),
            "at": self.at,
            "notified_at": self.notified_at,
            "turn_at": self.turn_at,
            "answered_at": self.answered_at,
            "text": self.text,
        }

    @classmethod
    def from_json(cls, raw: Any) -> BucketState | None:
        if not isinstance(raw, dict):
            return None
        try:
            return cls(
                float(raw["tokens"]),
                float(raw["at"]),
                _opt_float(raw.get("notified_at")),
                _opt_float(raw.get("turn_at")),
                _opt_float(raw.get("answered_at")),
                str(raw.get("text") or ""),
            )
        except (KeyError, TypeError, ValueError):
            return None

    def answered(self, now: float) -> BucketState:
        return replace(self, answered_at=now)


def _opt_float(value: Any) -> float | None:
    return None if value is None else float(value)


@dataclass(frozen=True, slots=True)
class Pace:
    """Whether a turn reads as conversation, and why (or why not)."""

    conversation: bool
    reason: str  # first_turn | not_answered | too_soon | repeat | paced | pacing_off


@dataclass(frozen=True, slots=True)
class MemberDecision:
    allowed: bool
    reason: str
    state: BucketState | None  # what to store (None: nothing changes)
    notify: bool = False  # send the one over-limit phrase of this window
    retry_after_s: float = 0.0  # until the next token
    pace: str = ""  # `Pace.reason`
    counts_conversation: bool = False  # the caller adds one to today's conversation turns

    def to_log_dict(self) -> dict[str, Any]:
        return {
            "allowed": self.allowed,
            "reason": self.reason,
            "pace": self.pace,
            "notify": self.notify,
            "retry_after_s": round(self.retry_after_s, 1),
            "tokens": None if self.state is None else round(self.state.tokens, 3),
        }


def refill_rate(limits: MemberLimitConfig) -> float:
    """Tokens per second."""
    return limits.turns / limits.window_s


def state_ttl(limits: MemberLimitConfig) -> float:
    """How long a stored bucket matters: until it is full again, and the notice window."""
    return max(limits.burst / refill_rate(limits), limits.window_s) + COST_MEMBER_TTL_MARGIN_S


def current_tokens(state: BucketState | None, now: float, limits: MemberLimitConfig) -> float:
    if state is None:
        return float(limits.burst)
    elapsed = max(0.0, now - state.at)
    return min(float(limits.burst), state.tokens + elapsed * refill_rate(limits))


def normalise_line(text: str) -> str:
    """The part of a line that tells a repeat: no spaces, case folded, bounded."""
    return "".join(text.split()).casefold()[:TEXT_KEPT]


def same_line(a: str, b: str, similarity: float) -> bool:
    """Repeated or near-identical (a flood pasting one line with small edits)."""
    if not a or not b:
        return False
    return a == b or SequenceMatcher(None, a, b, autojunk=False).ratio() >= similarity


def pace_of(state: BucketState | None, now: float, line: str, limits: MemberLimitConfig) -> Pace:
    """Is this turn a paced reply to the bot's answer (conversation) or part of a flood?"""
    if limits.conversation_daily_turns <= 0:
        return Pace(False, "pacing_off")
    if state is None or state.turn_at is None:
        return Pace(False, "first_turn")
    if state.answered_at is None or state.answered_at < state.turn_at:
        return Pace(False, "not_answered")  # the bot has not answered the previous line yet
    if now - state.turn_at < limits.conversation_gap_s:
        return Pace(False, "too_soon")
    if same_line(line, state.text, limits.repeat_similarity):
        return Pace(False, "repeat")
    return Pace(True, "paced")


def decide_member_turn(
    state: BucketState | None,
    now: float,
    limits: MemberLimitConfig,
    *,
    exempt: bool = False,
    text: str = "",
    conversation_today: int = 0,
) -> MemberDecision:
    """May this member take one more LLM turn now? (`text`: the turn's line;
    `conversation_today`: conversation turns the member already took this China day.)"""
    if not limits.enabled:
        return MemberDecision(True, DISABLED, None)
    if exempt:
        return MemberDecision(True, EXEMPT, None)
    line = normalise_line(text)
    pace = pace_of(state, now, line, limits)
    tokens = current_tokens(state, now, limits)
    base = BucketState(
        tokens,
        now,
        state.notified_at if state is not None else None,
        turn_at=now,
        answered_at=state.answered_at if state is not None else None,
        text=line,
    )
    if pace.conversation and conversation_today < limits.conversation_daily_turns:
        return MemberDecision(True, CONVERSATION, base, pace=pace.reason, counts_conversation=True)
    if tokens >= 1.0:
        return MemberDecision(True, ALLOWED, replace(base, tokens=tokens - 1.0), pace=pace.reason)
    retry = (1.0 - tokens) / refill_rate(limits)
    if pace.conversation:  # paced, but past today's ceiling: the flood bucket is all that is left
        return _refused(base, now, limits, CEILING, CEILING_NOTIFY, pace, retry=retry)
    return _refused(base, now, limits, LIMITED, LIMITED_NOTIFY, pace, retry=retry)


def _refused(
    base: BucketState,
    now: float,
    limits: MemberLimitConfig,
    reason: str,
    notified_reason: str,
    pace: Pace,
    *,
    retry: float,
) -> MemberDecision:
    notified_at = base.notified_at
    notify = notified_at is None or not (0.0 <= now - notified_at < limits.window_s)
    stored = replace(base, notified_at=now if notify else notified_at)
    return MemberDecision(
        False,
        notified_reason if notify else reason,
        stored,
        notify=notify,
        retry_after_s=retry,
        pace=pace.reason,
    )
