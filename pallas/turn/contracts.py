"""The spine's contracts: how a turn ended (`TurnOutcome`, `TurnResult`), what the admit step
hands the reply steps (`ReplyTurn`), the reply steps' typed records (`PreparedTurn`,
`ModelCall`, `AnswerRecord` → the snapshot JSON) and the after-turn hook protocol (values
passed between the orchestrator, the steps, their hooks and their callers)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any, Protocol

from pallas.config import GroupConfig
from pallas.context.processor_inputs import ChatTurnContext
from pallas.context.snapshot import JsonDict, TurnSnapshot
from pallas.core.deferred import Deferred
from pallas.core.sending import Sender
from pallas.core.turn import TurnInput
from pallas.features.cost import PROCEED, CostVerdict
from pallas.features.persona import PersonaPack
from pallas.features.tools import NO_TOOL, ToolPlan
from pallas.providers.client import CompletionResult
from pallas.providers.models import ModelProfile
from pallas.routing.evaluate import RouteResult
from pallas.turn.context import TurnContext


@dataclass(frozen=True, slots=True)
class ReplyTurn:
    """What the admit step hands the reply steps: the message's context, its route and config
    (both shaped by the cost ladder's shorter context where it applies), the persona, the
    planned tool and the cost guard's verdict."""

    turn_ctx: TurnContext
    route: RouteResult
    config: GroupConfig
    persona: PersonaPack
    tool: ToolPlan = NO_TOOL
    cost: CostVerdict = PROCEED
    short: bool = False  # a stale @: one short bubble to the member's latest message

    @property
    def turn(self) -> TurnInput:
        return self.turn_ctx.turn

    @property
    def sender(self) -> Sender:
        return self.turn_ctx.sender


@dataclass(frozen=True, slots=True)
class PreparedTurn:
    """A reply turn built up to the LLM call: its context, the request and the snapshot so far
    (the routing decision, sections, budget, retrieval, tool, merge wait, cost ladder)."""

    turn_id: str
    current_text: str
    ctx: ChatTurnContext
    messages: Sequence[Mapping[str, Any]]
    model: str
    profile: ModelProfile
    snapshot: Deferred[TurnSnapshot]  # the snapshot so far, built while the model is awaited
    started: float
    merged_image_urls: tuple[str, ...] = ()  # images of quick follow-ups folded into the turn


@dataclass(frozen=True, slots=True)
class ModelCall:
    """The turn's one LLM call: what was sent (image-safe copy), the images, what came back."""

    result: CompletionResult
    request: list[JsonDict]  # the request as stored: image blocks replaced by their hashes
    vision: JsonDict

    @property
    def usage(self) -> JsonDict:
        result = self.result
        usage: JsonDict = {
            "prompt_tokens": result.prompt_tokens,
            "completion_tokens": result.completion_tokens,
            "latency_ms": round(result.latency_ms, 1),
        }
        if result.cached_tokens or result.reasoning_tokens:
            usage["cached_tokens"] = result.cached_tokens
            usage["reasoning_tokens"] = result.reasoning_tokens
        if result.endpoint:  # which endpoint answered, and who failed before it
            usage["endpoint"] = result.endpoint
            usage["attempts"] = list(result.attempts)
        return usage


@dataclass(frozen=True, slots=True)
class AnswerRecord:
    """What became of the model's answer: output rules, bubbles, and (once delivery ran) the
    sent ids, the local time of the turn and the session-variable commit."""

    output_regex: list[dict[str, Any]]
    bubbles: list[str]
    parse: JsonDict
    sent_message_ids: list[int] | None = None
    total_local_ms: float | None = None
    svars: JsonDict | None = None


def snapshot_json(
    snap: TurnSnapshot, call: ModelCall | None = None, answer: AnswerRecord | None = None
) -> JsonDict:
    """The stored snapshot JSON: the prepared part (`PreparedTurn.snapshot`), then what the
    call and the answer added (keys in the order `TurnSnapshot` lists them, as the stored JSON
    always had)."""
    if call is not None:
        snap = replace(
            snap,
            request=call.request,
            vision=call.vision,
            usage=call.usage,
            response=call.result.text,
        )
    if answer is not None:
        stage_ms = dict(snap.stage_ms)
        if answer.total_local_ms is not None:
            stage_ms["total_local"] = answer.total_local_ms
        snap = replace(
            snap,
            stage_ms=stage_ms,
            output_regex=answer.output_regex,
            bubbles=answer.bubbles,
            parse=answer.parse,
            sent_message_ids=answer.sent_message_ids,
            svars=answer.svars,
        )
    return snap.to_dict()


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


class StakeKeySource(Protocol):
    """Words that give the bot a stake in an unaddressed line (its worldbooks' keys)."""

    async def stake_keys(self, names: Sequence[str]) -> frozenset[str]: ...


class PhraseSource(Protocol):
    """Where the PASS exit finds a group's own short expressions (group learning)."""

    async def low_engagement_phrases(
        self, bot_id: int, group_id: int, *, now: float, config: GroupConfig
    ) -> tuple[str, ...]: ...
