"""Learning records shared by the learning stage and its repositories (core owns the types
the database layer stores; the product's learning modules build and use them).

Reply pairs and their labels, a group's reply profile, behaviour strategies, and the negative
feedback outcomes with their blames.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from enum import StrEnum

from pallas.core.clock import DAY_S
from pallas.core.text import match_key

FeedbackKey = tuple[int, int, int, int]  # bot id, group id, bot message id, admin id


class PairKind(StrEnum):
    QUOTE = "quote"
    ADJACENT = "adjacent"


class LearningType(StrEnum):
    OBSERVED = "observed"  # members answering members → 群表达指导 / 真人接话参考
    SELF_REFLECTION = "self_reflection"  # members answering the bot → 接话复盘


@dataclass(frozen=True, slots=True)
class ReplyPair:
    """One trigger → response pair; texts are cleaned (placeholders removed, one line)."""

    trigger_id: int
    response_id: int
    trigger_text: str
    response_text: str
    kind: PairKind
    trigger_user: int
    response_user: int
    time: float  # when the response was sent
    learning_type: LearningType
    bot_id: int = 0
    group_id: int = 0
    response_row_id: int = 0  # `message` table row of the response: the resume cursor
    context_text: str = ""  # self_reflection only: the member line the bot was answering

    @property
    def key(self) -> tuple[int, int]:
        return (self.trigger_id, self.response_id)

    @property
    def source_token(self) -> str:
        """Provenance token recorded in the injection snapshot when this pair is injected."""
        return f"pair:{self.bot_id}:{self.group_id}:{self.trigger_id}:{self.response_id}"


@dataclass(frozen=True, slots=True)
class PairLabel:
    """The cheap model's reading of one pair; stored next to the pair (bot × group)."""

    trigger_id: int
    response_id: int
    learning_type: LearningType
    situation: str
    interaction_action: str
    intensity: int  # 1..3
    transferable: bool
    outcome: str = ""
    time: float = 0.0  # the pair's response time (for recency weighting)
    bot_id: int = 0
    group_id: int = 0

    @property
    def key(self) -> tuple[int, int]:
        return (self.trigger_id, self.response_id)


@dataclass(frozen=True, slots=True)
class GroupReplyProfile:
    bot_id: int
    group_id: int
    sample_turns: int
    sample_bubbles: int
    bubbles_p50: float
    bubbles_p90: float
    chars_p50: float  # chars per bubble
    chars_p90: float
    single_bubble_share: float  # share of turns with exactly one bubble, 0..1


@dataclass(frozen=True, slots=True)
class BehaviorStrategy:
    situation: str
    action: str
    outcome: str
    learning_type: LearningType
    support_count: int
    score: float
    bot_id: int = 0
    group_id: int = 0

    @property
    def source_token(self) -> str:
        """Provenance token for the injection snapshot (source kind `semantic`)."""
        digest = hashlib.sha1(
            f"{match_key(self.situation)}|{match_key(self.action)}".encode()
        ).hexdigest()[:12]
        return f"strategy:{self.bot_id}:{self.group_id}:{self.learning_type.value}:{digest}"


@dataclass(frozen=True, slots=True)
class Blame:
    kind: str
    source_id: str
    weight: float  # negative, from the blame weights
    phrase: str = ""


@dataclass(frozen=True, slots=True)
class FeedbackOutcome:
    """One stored negative outcome; `key` is its idempotency key."""

    bot_id: int
    group_id: int
    bot_message_id: int
    admin_id: int
    created_at: float
    word: str
    blames: tuple[Blame, ...]
    bot_text: str = ""
    ignored_sources: tuple[str, ...] = ()  # snapshot kinds without a blame weight (trace)
    undone_at: float | None = None

    @property
    def key(self) -> FeedbackKey:
        return (self.bot_id, self.group_id, self.bot_message_id, self.admin_id)

    @property
    def active(self) -> bool:
        return self.undone_at is None

    def decay(self, now: float, half_life_days: float = 30.0) -> float:
        if not self.active:
            return 0.0
        if half_life_days <= 0:
            return 1.0
        age_days = max(0.0, now - self.created_at) / DAY_S
        return float(0.5 ** (age_days / half_life_days))

    def penalty(self, now: float, half_life_days: float = 30.0) -> float:
        """Total decayed penalty (positive magnitude); 0 once undone."""
        factor = self.decay(now, half_life_days)
        return sum(abs(blame.weight) for blame in self.blames) * factor
