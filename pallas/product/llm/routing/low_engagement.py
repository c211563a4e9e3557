"""PASS low-engagement exit: maybe one short local phrase instead of silence, never an LLM call.

Gate: the decision is a rule PASS (`source == "rule"`) on a turn not addressed to the bot.
Roll: probability by the bot's recent reply count in the group (0→0.35, 1–2→0.20, 3–4→0.10,
≥5→0.05 by default). Pick: when the focus text carries emotion words (难绷/破防/麻了/emo/烦/累/
哭/气死 …) the emotion-tangent pool; otherwise the group's active expressions plus the soft pool;
the emoji pool when those are empty. The last phrase used in the group is never picked again,
and every pool (built-in or admin-supplied) is filtered: ≤ `max_chars`, single line, no CQ code,
link or @, nothing from the blocklist.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pallas.product.llm.routing import phrases
from pallas.product.llm.routing.config import LowEngagementConfig
from pallas.product.llm.routing.current_turn_decision import CurrentTurnAction
from pallas.product.llm.routing.text_signals import has_emotion

_FORBIDDEN_MARKS = ("[CQ:", "http://", "https://", "www.", "@", "\n", "\r", "【", "】")


@dataclass(frozen=True, slots=True)
class LowEngagementResult:
    emit: bool
    reason: str  # emit | not_pass | not_rule_source | addressed | disabled | roll_miss | no_phrase
    phrase: str | None = None
    pool: str | None = None  # group | soft | emotion | emoji
    probability: float = 0.0
    roll: float | None = None


def emit_probability(recent_bot_replies: int, config: LowEngagementConfig) -> float:
    """Probability of the step with the largest minimum count not above `recent_bot_replies`."""
    count = max(0, recent_bot_replies)
    probability = 0.0
    for minimum, step_probability in config.probability_steps:
        if count >= minimum:
            probability = step_probability
    return probability


def is_clean_phrase(phrase: str, *, max_chars: int, blocklist: Iterable[str]) -> bool:
    text = phrase.strip()
    if not text or len(text) > max_chars:
        return False
    if any(mark in text for mark in _FORBIDDEN_MARKS):
        return False
    lowered = text.lower()
    return not any(word and word.lower() in lowered for word in blocklist)


def clean_pool(pool: Iterable[str], *, max_chars: int, blocklist: Sequence[str]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for phrase in pool:
        text = phrase.strip()
        if text not in seen and is_clean_phrase(text, max_chars=max_chars, blocklist=blocklist):
            seen[text] = None
    return tuple(seen)


def build_pools(
    config: LowEngagementConfig, group_expressions: Iterable[str] = ()
) -> dict[str, tuple[str, ...]]:
    """The filtered pools for one group: config overrides replace the built-in pools."""
    blocklist = (*phrases.BLOCKLIST, *config.extra_blocklist)
    raw = {
        "group": tuple(group_expressions) if config.use_group_expressions else (),
        "soft": phrases.SOFT_POOL if config.soft_pool is None else config.soft_pool,
        "emotion": (
            phrases.EMOTION_TANGENT_POOL if config.emotion_pool is None else config.emotion_pool
        ),
        "emoji": phrases.EMOJI_POOL if config.emoji_pool is None else config.emoji_pool,
    }
    return {
        name: clean_pool(pool, max_chars=config.max_chars, blocklist=blocklist)
        for name, pool in raw.items()
    }


def pick_phrase(
    pools: dict[str, tuple[str, ...]],
    *,
    emotional: bool,
    last_phrase: str | None,
    rng: random.Random,
) -> tuple[str, str] | None:
    """(phrase, pool name) or None; never returns `last_phrase`."""
    tiers = [("emotion",)] if emotional else []
    tiers += [("group", "soft"), ("emoji",)]
    for tier in tiers:
        options = [
            (phrase, name)
            for name in tier
            for phrase in pools.get(name, ())
            if phrase != last_phrase
        ]
        if options:
            return options[rng.randrange(len(options))]
    return None


def decide_low_engagement(
    config: LowEngagementConfig,
    *,
    action: CurrentTurnAction,
    source: str,
    addressed: bool,
    focus_text: str,
    recent_bot_replies: int,
    rng: random.Random,
    last_phrase: str | None = None,
    group_expressions: Iterable[str] = (),
) -> LowEngagementResult:
    if action is not CurrentTurnAction.PASS:
        return LowEngagementResult(False, "not_pass")
    if source != "rule":
        return LowEngagementResult(False, "not_rule_source")
    if addressed:
        return LowEngagementResult(False, "addressed")
    if not config.enabled:
        return LowEngagementResult(False, "disabled")
    probability = emit_probability(recent_bot_replies, config)
    roll = rng.random()
    if roll >= probability:
        return LowEngagementResult(False, "roll_miss", probability=probability, roll=roll)
    pools = build_pools(config, group_expressions)
    picked = pick_phrase(pools, emotional=has_emotion(focus_text), last_phrase=last_phrase, rng=rng)
    if picked is None:
        return LowEngagementResult(False, "no_phrase", probability=probability, roll=roll)
    phrase, pool = picked
    return LowEngagementResult(True, "emit", phrase, pool, probability, roll)
