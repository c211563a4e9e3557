"""The chat turn's contracts: how a turn ended (`TurnOutcome`, `TurnResult`), the prepared
reply turn, and the after-turn hook protocol (values passed between the orchestrator, its
hooks and its callers)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol

from pallas.core.turn import TurnInput
from pallas.product.config import GroupConfig
from pallas.product.llm.context.processor_inputs import ChatTurnContext
from pallas.product.llm.provider.models import ModelProfile


@dataclass(frozen=True, slots=True)
class CompletedTurn:
    """Handed to after-turn hooks (summaries, memory extraction, learning) once delivered."""

    turn: TurnInput
    user_text: str
    reply_text: str
    sent_ids: tuple[int, ...]
    turn_id: str
    config: GroupConfig


class AfterTurnHook(Protocol):
    name: str

    async def after_turn(self, completed: CompletedTurn) -> None: ...


@dataclass(frozen=True, slots=True)
class PreparedTurn:
    """A reply turn built up to the LLM call: its context, the request and the snapshot data."""

    turn_id: str
    current_text: str
    ctx: ChatTurnContext
    messages: Sequence[Mapping[str, Any]]
    model: str
    profile: ModelProfile
    data: dict[str, Any]  # the injection snapshot, completed as the turn goes on
    started: float
    merged_image_urls: tuple[str, ...] = ()  # images of quick follow-ups folded into the turn


class TurnResult(StrEnum):
    """How a turn ended. Routing outcomes keep their `RouteOutcome` values."""

    # routing (RouteOutcome values)
    REPLY = "reply"
    QUOTE = "quote"
    FOLLOW_UP = "follow_up"
    TOOL = "tool"
    PASS_PHRASE = "pass_phrase"
    PASS_SILENT = "pass_silent"
    SKIP = "skip"
    ACCUMULATE = "accumulate"
    DEFER = "defer"
    MERGE = "merge"
    # admission, freshness, cost guard
    REJECTED = "rejected"
    STALE = "stale"
    COST_LIMITED = "cost_limited"
    COST_PHRASE = "cost_phrase"
    COST_DROP = "cost_drop"
    COST_DEGRADED = "cost_degraded"
    # reply stage
    DELIVERED = "delivered"
    PARTIAL = "partial"
    SILENT = "silent"
    ERROR = "error"
    DISABLED = "disabled"


@dataclass(frozen=True, slots=True)
class TurnOutcome:
    outcome: TurnResult  # a plain string of the same value is accepted and converted
    reason: str
    sent_ids: tuple[int, ...] = ()
    turn_id: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "outcome", TurnResult(self.outcome))


class PhraseSource(Protocol):
    """Where the PASS exit finds a group's own short expressions (group learning)."""

    async def low_engagement_phrases(
        self, bot_id: int, group_id: int, *, now: float, config: Any
    ) -> tuple[str, ...]: ...
