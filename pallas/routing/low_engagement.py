"""PASS low-engagement exit: maybe one short local phrase instead of silence, never an LLM call.

Gate: the decision is a rule PASS (`source == "rule"`) on a turn not addressed to the bot.
Fit: the phrase must fit the message's mood (`ambient_stake.classify_mood`): a question never
gets a phrase (`question`), a plain statement gets silence (`statement_silence`, unless the group
sets `statement_phrases`); good news → the good-news pool (好耶 …), venting → the comfort /
tangent pool, a surprise → the surprise pool (诶 …), thanks / teasing of the bot in a follow-up
or a mention → the warm pool (嘿嘿 …).
Roll: probability by the bot's recent reply count in the group (0→0.35, 1–2→0.20, 3–4→0.10,
≥5→0.05 by default). Pick: the mood's pool plus the group's learned expressions whose mood
(`expression_mood`: the mood of the messages the group answered with it, else its wording) is
the message's mood. Never the last phrase used in the group, never a
phrase the member or the group just said (`recent_texts`). Every pool (built-in, admin-supplied
or learned) is filtered: ≤ `max_chars`, single line, no CQ code, link or @, nothing from the
blocklist, and no trailing question mark or instruction particle (吧 / 呀 / 呢 / 吗 / 嘛 …).
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pallas.routing.ambient_stake import Mood, ObservedPhrase, classify_mood
from pallas.routing.config import LowEngagementConfig
from pallas.routing.current_turn_decision import CurrentTurnAction
from pallas.routing.phrases import (
    BLOCKLIST,
    EMOJI_POOL,
    EMOTION_TANGENT_POOL,
    GOOD_NEWS_POOL,
    SOFT_POOL,
    SURPRISE_POOL,
    WARM_POOL,
)

_FORBIDDEN_MARKS = ("[CQ:", "http://", "https://", "www.", "@", "\n", "\r", "【", "】")
# A phrase ending like this reads as a question or an instruction in a stranger's chat.
_BAD_ENDING_RE = re.compile(r"[?？吧呀呢吗嘛么罢][\s~～!！。.…]*$")
_EXPRESSION_MOODS = (
    (Mood.GOOD_NEWS, re.compile(r"好耶|恭喜|太好了|厉害|牛啊|牛哇|强啊|666|yyds|羡慕|好诶|欧皇")),
    (Mood.VENTING, re.compile(r"抱抱|摸摸|辛苦|缓一缓|歇|会好的|会好起来|心疼|揉揉|贴贴|没事的")),
    (Mood.WARM, re.compile(r"^(?:嘿嘿|欸嘿|诶嘿|不客气|小事)")),
    (Mood.SURPRISE, re.compile(r"^(?:诶|欸|哇|啊这|好家伙|居然|woc|卧槽|我靠)")),
)
_MOOD_POOL = {
    Mood.GOOD_NEWS: "good_news",
    Mood.VENTING: "emotion",
    Mood.SURPRISE: "surprise",
    Mood.WARM: "warm",
}


@dataclass(frozen=True, slots=True)
class LowEngagementResult:
    emit: bool
    # emit | not_pass | not_rule_source | addressed | disabled | question | statement_silence |
    # roll_miss | no_phrase
    reason: str
    phrase: str | None = None
    pool: str | None = None  # group | good_news | emotion | surprise | warm | soft | emoji
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
    if any(mark in text for mark in _FORBIDDEN_MARKS) or _BAD_ENDING_RE.search(text):
        return False
    lowered = text.lower()
    return not any(word and word.lower() in lowered for word in blocklist)


def clean_pool(pool: Iterable[str], *, max_chars: int, blocklist: Sequence[str]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for phrase in pool:
        text = phrase.strip()
        if isinstance(phrase, ObservedPhrase):  # keep the observed mood through the strip
            text = ObservedPhrase(text, phrase.mood)
        if text not in seen and is_clean_phrase(text, max_chars=max_chars, blocklist=blocklist):
            seen[text] = None
    return tuple(seen)


def build_pools(
    config: LowEngagementConfig, group_expressions: Iterable[str] = ()
) -> dict[str, tuple[str, ...]]:
    """The filtered pools for one group: config overrides replace the built-in pools."""
    blocklist = (*BLOCKLIST, *config.extra_blocklist)
    raw = {
        "group": tuple(group_expressions) if config.use_group_expressions else (),
        "soft": SOFT_POOL if config.soft_pool is None else config.soft_pool,
        "emotion": (EMOTION_TANGENT_POOL if config.emotion_pool is None else config.emotion_pool),
        "emoji": EMOJI_POOL if config.emoji_pool is None else config.emoji_pool,
        "good_news": (GOOD_NEWS_POOL if config.good_news_pool is None else config.good_news_pool),
        "surprise": SURPRISE_POOL if config.surprise_pool is None else config.surprise_pool,
        "warm": WARM_POOL if config.warm_pool is None else config.warm_pool,
    }
    return {
        name: clean_pool(pool, max_chars=config.max_chars, blocklist=blocklist)
        for name, pool in raw.items()
    }


def expression_mood(expression: str) -> Mood | None:
    """The mood a group expression fits: the mood it was observed in (`ObservedPhrase`, from
    group learning), else its own wording; None for a neutral or mixed one."""
    if isinstance(expression, ObservedPhrase):
        return expression.mood
    text = expression.strip().lower()
    for mood, pattern in _EXPRESSION_MOODS:
        if pattern.search(text):
            return mood
    return None


def pick_phrase(
    pools: dict[str, tuple[str, ...]],
    *,
    mood: Mood,
    last_phrase: str | None,
    rng: random.Random,
    recent_texts: Sequence[str] = (),
) -> tuple[str, str] | None:
    """(phrase, pool name) or None; never `last_phrase`, never what the group just said."""
    said = [t.strip().lower() for t in recent_texts if t.strip()]

    def usable(phrase: str) -> bool:
        low = phrase.lower()
        return phrase != last_phrase and not any(low in t or t == low for t in said)

    if mood in _MOOD_POOL:
        group = tuple(p for p in pools.get("group", ()) if expression_mood(p) is mood)
        tiers = [{"group": group, _MOOD_POOL[mood]: pools.get(_MOOD_POOL[mood], ())}]
    else:  # a plain statement, only with statement_phrases
        group = tuple(p for p in pools.get("group", ()) if expression_mood(p) is None)
        tiers = [{"group": group, "soft": pools.get("soft", ())}, {"emoji": pools["emoji"]}]
    for tier in tiers:
        options = [(p, name) for name, pool in tier.items() for p in pool if usable(p)]
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
    mood: Mood | None = None,
    recent_texts: Sequence[str] = (),
) -> LowEngagementResult:
    if action is not CurrentTurnAction.PASS:
        return LowEngagementResult(False, "not_pass")
    if source != "rule":
        return LowEngagementResult(False, "not_rule_source")
    if addressed:
        return LowEngagementResult(False, "addressed")
    if not config.enabled:
        return LowEngagementResult(False, "disabled")
    fit = mood if mood is not None else classify_mood(focus_text)
    if fit is Mood.QUESTION:
        return LowEngagementResult(False, "question")
    if fit is Mood.STATEMENT and not config.statement_phrases:
        return LowEngagementResult(False, "statement_silence")
    probability = emit_probability(recent_bot_replies, config)
    roll = rng.random()
    if roll >= probability:
        return LowEngagementResult(False, "roll_miss", probability=probability, roll=roll)
    pools = build_pools(config, group_expressions)
    picked = pick_phrase(
        pools,
        mood=fit,
        last_phrase=last_phrase,
        rng=rng,
        recent_texts=(focus_text, *recent_texts),
    )
    if picked is None:
        return LowEngagementResult(False, "no_phrase", probability=probability, roll=roll)
    phrase, pool = picked
    return LowEngagementResult(True, "emit", phrase, pool, probability, roll)
