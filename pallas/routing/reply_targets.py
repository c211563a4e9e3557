"""QUOTE candidates and the native-quote decision.

Candidates are the group's recent messages the bot may reply to with a native reply segment:
the bot's own sent messages and the incoming messages it engaged with, a deque of `candidates`
(6) ids per group. The caller stores the list (the router keeps it in the StateStore); these
functions only compute the next value.

A member quotes message X (`reply_to = X`): the rule path turns a plain REPLY into a QUOTE with
`reply_message_id = X` only when X is a live candidate, the group's quote cooldown (120 s) has
passed and the probability roll (0.25) hits. Otherwise the reply is plain, with the reason.
Delivery calls `resolve_quote_reply_target` right before sending: quote only ids that are
still candidates.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from pallas.routing.config import QuoteConfig


def add_candidate(candidates: Sequence[int], message_id: int, *, maxlen: int = 6) -> list[int]:
    """New candidate list: `message_id` appended (moved to the end if present), oldest dropped."""
    updated = [mid for mid in candidates if mid != message_id]
    updated.append(message_id)
    return updated[-maxlen:] if maxlen > 0 else []


def is_live_candidate(candidates: Sequence[int], message_id: int | None) -> bool:
    return message_id is not None and message_id in candidates


def resolve_quote_reply_target(
    requested_id: int | None, live_candidates: Sequence[int]
) -> int | None:
    """The id delivery may quote, or None to send plain text (unknown / expired target)."""
    return requested_id if is_live_candidate(live_candidates, requested_id) else None


@dataclass(frozen=True, slots=True)
class QuoteDecision:
    quote: bool
    reason: str  # quote | quote_disabled | no_reply_target | target_not_candidate | ...
    reply_message_id: int | None = None
    roll: float | None = None


def decide_quote(
    config: QuoteConfig,
    *,
    reply_to: int | None,
    candidates: Sequence[int],
    last_quote_at: float | None,
    now: float,
    rng: random.Random,
) -> QuoteDecision:
    """Whether to answer with a native quote of `reply_to`. Draws `rng` only for the final roll."""
    if not config.enabled:
        return QuoteDecision(False, "quote_disabled")
    if reply_to is None:
        return QuoteDecision(False, "no_reply_target")
    if not is_live_candidate(candidates, reply_to):
        return QuoteDecision(False, "target_not_candidate")
    if last_quote_at is not None and now - last_quote_at < config.cooldown_s:
        return QuoteDecision(False, "quote_cooldown")
    roll = rng.random()
    if roll < config.probability:
        return QuoteDecision(True, "quote", reply_to, roll)
    return QuoteDecision(False, "quote_roll_miss", None, roll)
