"""Per-member rate limit on LLM turns: a pure token-bucket decision.

The bucket of one member in one group holds at most `burst` turns and refills at
`turns / window_s` per second (GCRA / nginx `limit_req` semantics). A turn takes one token;
without a token the turn is refused (no LLM call). The first refusal of a window carries
`notify=True` (the caller sends one local phrase); later refusals in the same window are silent.

Time is an argument. Clock jumps: a clock that went backwards refills nothing (and restarts
the bucket's timestamp at `now`); a forward jump refills at most to `burst`. A notification
timestamp in the future (clock went back) counts as expired.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pallas.core.state_keys import COST_MEMBER_TTL_MARGIN_S
from pallas.features.cost.config import MemberLimitConfig

ALLOWED = "member_ok"
EXEMPT = "member_exempt"
DISABLED = "member_limit_off"
LIMITED = "member_rate_limited"
LIMITED_NOTIFY = "member_rate_limited:notified"


@dataclass(frozen=True, slots=True)
class BucketState:
    tokens: float
    at: float  # when `tokens` was measured
    notified_at: float | None = None  # last over-limit phrase

    def to_json(self) -> dict[str, Any]:
        return {"tokens": round(self.tokens, 6), "at": self.at, "notified_at": self.notified_at}

    @classmethod
    def from_json(cls, raw: Any) -> BucketState | None:
        if not isinstance(raw, dict):
            return None
        try:
            notified = raw.get("notified_at")
            return cls(
                float(raw["tokens"]),
                float(raw["at"]),
                None if notified is None else float(notified),
            )
        except (KeyError, TypeError, ValueError):
            return None


@dataclass(frozen=True, slots=True)
class MemberDecision:
    allowed: bool
    reason: str
    state: BucketState | None  # what to store (None: nothing changes)
    notify: bool = False  # send the one over-limit phrase of this window
    retry_after_s: float = 0.0  # until the next token

    def to_log_dict(self) -> dict[str, Any]:
        return {
            "allowed": self.allowed,
            "reason": self.reason,
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


def decide_member_turn(
    state: BucketState | None, now: float, limits: MemberLimitConfig, *, exempt: bool = False
) -> MemberDecision:
    """May this member take one more LLM turn now?"""
    if not limits.enabled:
        return MemberDecision(True, DISABLED, None)
    if exempt:
        return MemberDecision(True, EXEMPT, None)
    tokens = current_tokens(state, now, limits)
    notified_at = state.notified_at if state is not None else None
    if tokens >= 1.0:
        return MemberDecision(True, ALLOWED, BucketState(tokens - 1.0, now, notified_at))
    retry = (1.0 - tokens) / refill_rate(limits)
    notify = notified_at is None or not (0.0 <= now - notified_at < limits.window_s)
    stored = BucketState(tokens, now, now if notify else notified_at)
    reason = LIMITED_NOTIFY if notify else LIMITED
    return MemberDecision(False, reason, stored, notify=notify, retry_after_s=retry)
