"""The chat turn's side of the cost guard: end a turn the guard refused.

A refused turn sends at most one local phrase (never an error text), always writes a log line
and a route-log record with the guard's named reason (`/pallas why`), and frees the member's
in-flight marker like any other turn.
"""

from __future__ import annotations

import logging

from pallas.config import GroupConfig
from pallas.core.sending import SegmentDict, Sender, Target
from pallas.core.state import StateStore
from pallas.core.turn import TurnInput
from pallas.features.cost import CostVerdict
from pallas.routing.evaluate import RouteResult
from pallas.routing.router import Router
from pallas.turn.contracts import TurnOutcome, TurnResult
from pallas.turn.parts.delivery import send_phrase

log = logging.getLogger("pallas.cost")


def outcome_name(verdict: CostVerdict) -> TurnResult:
    """How a turn the cost guard acted on ends (a `TurnResult`, which is also its log name)."""
    if verdict.member is not None and not verdict.member.allowed:
        return TurnResult.COST_LIMITED
    if verdict.action == "phrase":
        return TurnResult.COST_PHRASE
    return TurnResult.COST_DROP if verdict.action == "drop" else TurnResult.COST_DEGRADED


async def notify_superusers(
    verdict: CostVerdict, sender: Sender, superusers: frozenset[int]
) -> None:
    """The deployment cap tripped on this turn: a private notice to each superuser."""
    if not verdict.notice:
        return
    notice: list[SegmentDict] = [{"type": "text", "data": {"text": f"【Pallas】{verdict.notice}"}}]
    for user_id in sorted(superusers):
        await sender.send(Target.private(user_id), notice)


async def note_verdict(
    routing: Router,
    superusers: frozenset[int],
    route: RouteResult,
    config: GroupConfig,
    verdict: CostVerdict,
    sender: Sender,
) -> None:
    """The route-log record of a refusal or a degradation (shown by `/pallas why`), and the
    superusers' notice when the deployment cap tripped on this turn."""
    await notify_superusers(verdict, sender, superusers)
    if not verdict.noteworthy:
        return
    await routing.note(
        route,
        config.routing,
        outcome=outcome_name(verdict),
        stage="cost",
        reason=verdict.reason,
        phrase=verdict.phrase,
        cost=verdict.to_log_dict(),
    )


async def refuse_turn(
    turn: TurnInput,
    route: RouteResult,
    config: GroupConfig,
    verdict: CostVerdict,
    sender: Sender,
    routing: Router,
    state: StateStore,
    superusers: frozenset[int],
) -> TurnOutcome:
    """End a turn the guard refused: the phrase (if any), the log line, the route record."""
    await note_verdict(routing, superusers, route, config, verdict, sender)
    sent: tuple[int, ...] = ()
    if verdict.phrase:
        mid = await send_phrase(turn.bot_id, Target.of(turn), verdict.phrase, sender, state)
        sent = () if mid is None else (mid,)
    log.info(
        "group %s: %s turn %s of user %s refused by the cost guard (%s)%s",
        turn.group_id,
        "addressed" if route.trigger.addressed else "unaddressed",
        turn.message_id,
        turn.user_id,
        verdict.reason,
        " with a local phrase" if verdict.phrase else "",
    )
    await routing.finish_turn(turn.bot_id, turn.group_id, turn.user_id)
    return TurnOutcome(TurnResult(outcome_name(verdict)), verdict.reason, sent)
