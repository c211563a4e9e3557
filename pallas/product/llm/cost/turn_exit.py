"""The chat turn's side of the cost guard: build the guard, and end a refused turn.

A refused turn sends at most one local phrase (never an error text), always writes a log line
and a route-log record with the guard's named reason (`/pallas why`), and frees the member's
in-flight marker like any other turn.
"""

from __future__ import annotations

import logging
import random

from pallas.core.turn import TurnInput
from pallas.product.config import GroupConfig
from pallas.product.llm.chat_turn_contracts import TurnOutcome
from pallas.product.llm.cost.counters import UsageCounters
from pallas.product.llm.cost.guard import CostGuard, CostVerdict
from pallas.product.llm.cost.ladder import Limits
from pallas.product.llm.delivery.delivery import GroupSender, send_phrase
from pallas.product.llm.routing.route_pipeline import RouteResult
from pallas.runtime import PallasRuntime

log = logging.getLogger("pallas.cost")


def guard_for(runtime: PallasRuntime, *, rng: random.Random | None = None) -> CostGuard:
    """The deployment's guard: counters in the runtime's StateStore, seeded from the ledger."""
    s = runtime.settings
    cheap = runtime.llm.model_for("cheap")
    return CostGuard(
        UsageCounters(runtime.state, runtime.repos.usage),
        deployment=Limits(s.pallas_daily_call_cap, s.pallas_daily_token_cap),
        cheap_model=cheap if cheap and cheap != runtime.llm.model_for("chat") else None,
        superusers=runtime.superusers,
        rng=rng or random.Random(),
    )


def outcome_name(verdict: CostVerdict) -> str:
    if verdict.member is not None and not verdict.member.allowed:
        return "cost_limited"
    return {"phrase": "cost_phrase", "drop": "cost_drop"}.get(verdict.action, "cost_degraded")


async def notify_superusers(verdict: CostVerdict, sender: object, runtime: PallasRuntime) -> None:
    """The deployment cap tripped on this turn: a private notice to each superuser."""
    if not verdict.notice:
        return
    send = getattr(sender, "send_private", None)  # OneBotGroupSender has it
    if send is None:
        log.warning("cost guard notice not sent (no private sender): %s", verdict.notice)
        return
    for user_id in sorted(runtime.superusers):
        await send(user_id, f"【Pallas】{verdict.notice}")


async def note_verdict(
    runtime: PallasRuntime,
    route: RouteResult,
    config: GroupConfig,
    verdict: CostVerdict,
    sender: GroupSender | None = None,
) -> None:
    """The route-log record of a refusal or a degradation (shown by `/pallas why`), and the
    superusers' notice when the deployment cap tripped on this turn."""
    await notify_superusers(verdict, sender, runtime)
    if not verdict.noteworthy:
        return
    await runtime.routing.note(
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
    sender: GroupSender,
    runtime: PallasRuntime,
) -> TurnOutcome:
    """End a turn the guard refused: the phrase (if any), the log line, the route record."""
    await note_verdict(runtime, route, config, verdict, sender)
    sent: tuple[int, ...] = ()
    if verdict.phrase:
        mid = await send_phrase(turn.bot_id, turn.group_id, verdict.phrase, sender, runtime.state)
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
    await runtime.routing.finish_turn(turn.bot_id, turn.group_id, turn.user_id)
    return TurnOutcome(outcome_name(verdict), verdict.reason, sent)
