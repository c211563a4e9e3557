"""reply_necessity: an additive, explainable score for "is this worth an answer".

Each term that applies is listed by name with its weight (all weights in `NecessityConfig`).
The turn passes at `score >= threshold`; an addressed turn (to_me) always passes, with reason
`addressed_override` when its score alone would not have.
"""

from __future__ import annotations

from dataclasses import dataclass

from pallas.routing.config import NecessityConfig
from pallas.routing.text_signals import (
    is_noise,
    is_question,
    is_request,
    is_short_reaction,
    is_spam,
    meaningful_length,
)

HARD_NEGATIVE_TERMS = frozenset({"bystander", "noise", "spam"})


@dataclass(frozen=True, slots=True)
class ScoreTerm:
    name: str
    weight: int


@dataclass(frozen=True, slots=True)
class NecessityInput:
    text: str  # content text (vocative alias removed)
    addressed: bool = False
    mentioned: bool = False
    follow_up: bool = False
    ambient: bool = False
    mentions_others: bool = False
    recent_bot_replies: int = 0  # bot replies in this group within recent_window_s
    back_and_forth: bool = False  # the bot has been talking with this member lately
    affinity: float | None = None  # 0..1, None when unknown


@dataclass(frozen=True, slots=True)
class NecessityResult:
    score: int
    threshold: int
    passed: bool
    terms: tuple[ScoreTerm, ...]
    reason: str  # addressed | addressed_override | above_threshold | below_threshold

    def weight_of(self, name: str) -> int | None:
        return next((t.weight for t in self.terms if t.name == name), None)

    @property
    def hard_negative(self) -> bool:
        """Noise, spam or bystander: such a turn stays silent even on the PASS exit."""
        return any(t.name in HARD_NEGATIVE_TERMS for t in self.terms)

    def terms_as_pairs(self) -> list[list[str | int]]:
        return [[t.name, t.weight] for t in self.terms]


def is_low_value_social(text: str, *, max_chars: int = 24) -> bool:
    """Short chatter without a question or a request."""
    plain = text.strip()
    return (
        bool(plain)
        and meaningful_length(plain) <= max_chars
        and not is_question(plain)
        and not is_request(plain)
    )


def _signal_terms(inp: NecessityInput, config: NecessityConfig) -> list[ScoreTerm]:
    soft = inp.addressed or inp.mentioned or inp.follow_up
    flags = [
        ("to_me", inp.addressed, config.to_me),
        ("mention", inp.mentioned and not inp.addressed, config.mention),
        ("follow_up", inp.follow_up and not inp.addressed, config.follow_up),
        ("ambient", inp.ambient and not soft, config.ambient),
        ("request", is_request(inp.text), config.request),
        ("question", is_question(inp.text), config.question),
        ("back_and_forth", inp.back_and_forth, config.back_and_forth),
        ("bystander", inp.mentions_others and not inp.addressed, config.bystander),
        ("noise", is_noise(inp.text), config.noise),
        ("spam", is_spam(inp.text), config.spam),
        ("short_reaction", is_short_reaction(inp.text), config.short_reaction),
        (
            "low_social",
            not soft and is_low_value_social(inp.text, max_chars=config.low_social_max_chars),
            config.low_social,
        ),
    ]
    return [ScoreTerm(name, weight) for name, applies, weight in flags if applies]


def _presence_terms(inp: NecessityInput, config: NecessityConfig) -> list[ScoreTerm]:
    terms: list[ScoreTerm] = []
    count = max(0, min(config.recent_bot_reply_cap, inp.recent_bot_replies))
    if count:
        soft = inp.addressed or inp.mentioned or inp.follow_up
        if soft and is_question(inp.text):
            terms.append(ScoreTerm("recent_bot_replies_exempt", 0))
        else:
            terms.append(ScoreTerm("recent_bot_replies", count * config.per_recent_bot_reply))
    if inp.affinity is not None and inp.affinity < config.low_affinity_pivot:
        share = (config.low_affinity_pivot - max(0.0, inp.affinity)) / config.low_affinity_pivot
        weight = round(config.low_affinity_max * share)
        if weight:
            terms.append(ScoreTerm("low_affinity", weight))
    return terms


def score_reply_necessity(inp: NecessityInput, config: NecessityConfig) -> NecessityResult:
    terms = (*_signal_terms(inp, config), *_presence_terms(inp, config))
    score = sum(t.weight for t in terms)
    above = score >= config.threshold
    if inp.addressed:
        reason = "addressed" if above else "addressed_override"
    else:
        reason = "above_threshold" if above else "below_threshold"
    return NecessityResult(score, config.threshold, above or inp.addressed, terms, reason)
