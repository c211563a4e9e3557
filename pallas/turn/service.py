"""One group message, start to finish (`ChatTurnService`): route → act on the next step.

    route          `RouteStep` (turn_route.py): freshness, tool plan, rules-only routing
    act            PASS phrase (one local phrase, no LLM) · merge into the member's in-flight
                   turn · retry an addressed message after the cooldown · or a REPLY turn:
                   admission slot → freshness after the queue → cost guard → the reply step
    reply          `ReplyStep` (reply_step.py): prepare → one LLM call → answer → deliver →
                   remember

Every part is built once by the composition root (`pallas.app.build_app`) and handed in.
Failures are quiet for the group and loud in the log: nothing but parsed bubbles is ever sent.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from pallas.core.clock import Clock
from pallas.core.state import StateStore
from pallas.core.turn import TurnInput
from pallas.features.cost import CostGuard
from pallas.routing.evaluate import RouteResult
from pallas.routing.freshness import FreshAction, FreshnessGate
from pallas.routing.router import Router
from pallas.turn.admit import GroupAdmission
from pallas.turn.contracts import Pause, TurnOutcome, TurnResult
from pallas.turn.cost_exit import note_verdict, refuse_turn
from pallas.turn.deliver import GroupSender, send_phrase
from pallas.turn.merges import TurnMerges
from pallas.turn.reply import ReplyStep
from pallas.turn.route import NextStep, ReplyTurn, RoutedTurn, RouteStep

__all__ = ["ChatTurnService", "TurnOutcome"]

log = logging.getLogger("pallas.chat")


@dataclass
class ChatTurnService:
    """The orchestrator of a group turn over injected parts (see `pallas.app.build_app`)."""

    router: RouteStep  # the route step (shared with `pallas replay`)
    reply: ReplyStep  # the reply step of a REPLY turn
    routing: Router
    merges: TurnMerges
    freshness: FreshnessGate
    cost: CostGuard  # per-member rate limit and daily budgets
    state: StateStore
    clock: Clock
    pause: Pause  # cooldown retries (the same pause the parts wait with)
    superusers: frozenset[int] = frozenset()
    admission: GroupAdmission = field(default_factory=GroupAdmission)

    # -- entry -------------------------------------------------------------------------------
    async def handle(
        self, turn: TurnInput, sender: GroupSender, *, attempt: int = 0
    ) -> TurnOutcome:
        """The route step, then what it asks for (phrase, merge, retry, reply)."""
        return await self.act(await self.router.route(turn, attempt=attempt), sender)

    async def act(self, routed: RoutedTurn, sender: GroupSender) -> TurnOutcome:
        turn, step, route = routed.turn, routed.step, routed.route
        if route is None:  # too old: recorded, not answered
            return TurnOutcome(TurnResult.STALE, routed.fresh.reason)
        if step is NextStep.PASS_PHRASE and route.phrase:
            sent = await send_phrase(turn.bot_id, turn.group_id, route.phrase, sender, self.state)
            return TurnOutcome(
                TurnResult.PASS_PHRASE, route.reason, () if sent is None else (sent,)
            )
        if step is NextStep.MERGE:
            await self.merges.park(turn)
            return TurnOutcome(TurnResult.MERGE, route.reason)
        if step is NextStep.RETRY:
            return await self._retry_later(routed, sender)
        if step is not NextStep.REPLY:
            return TurnOutcome(TurnResult(route.outcome.value), route.reason)
        return await self._admit(routed, route, sender)

    async def _admit(
        self, routed: RoutedTurn, route: RouteResult, sender: GroupSender
    ) -> TurnOutcome:
        """A REPLY turn: the group's slot, freshness after the queue, the cost guard, then the
        reply step."""
        turn, config = routed.turn, routed.config
        async with self.admission.slot(turn.bot_id, turn.group_id, config.routing.cooldown) as no:
            if no is not None:
                log.warning("group %s: turn %s dropped (%s)", turn.group_id, turn.message_id, no)
                await self.routing.finish_turn(turn.bot_id, turn.group_id, turn.user_id)
                return TurnOutcome(TurnResult.REJECTED, no)
            fresh = routed.fresh
            if fresh.action is FreshAction.ANSWER:  # waited behind the group's queue?
                now, addressed = self.clock.now(), route.trigger.addressed
                fresh = await self.freshness.admit(turn, config, now, addressed, stage="queue")
                if not fresh.answers:
                    await self.routing.finish_turn(turn.bot_id, turn.group_id, turn.user_id)
                    return TurnOutcome(TurnResult.STALE, fresh.reason)
            # cost guard: budgets and the member's rate limit, before any LLM work
            verdict = await self.cost.check(turn, route, config, self.clock.now())
            if not verdict.proceeds:
                return await refuse_turn(
                    turn, route, config, verdict, sender, self.routing, self.state, self.superusers
                )
            await note_verdict(self.routing, self.superusers, route, config, verdict, sender)
            route, config = verdict.shape(route, config)  # the ladder's shorter context
            reply = ReplyTurn(
                turn,
                route,
                config,
                routed.persona,
                sender,
                routed.tool,
                verdict,
                short=fresh.action is FreshAction.SHORT,
            )
            return await self._reply_safely(reply)

    async def _retry_later(self, routed: RoutedTurn, sender: GroupSender) -> TurnOutcome:
        """An addressed message that hit the group cooldown is answered once it ends."""
        wait = routed.retry_after_s()
        if wait is None:
            return TurnOutcome(TurnResult.ACCUMULATE, "retries_exhausted")
        await self.pause(wait)
        return await self.handle(routed.turn, sender, attempt=routed.attempt + 1)

    async def _reply_safely(self, reply: ReplyTurn) -> TurnOutcome:
        turn = reply.turn
        try:
            return await self.reply.run(reply)
        except Exception:
            log.exception("group %s: reply to message %s failed", turn.group_id, turn.message_id)
            return TurnOutcome(TurnResult.ERROR, "exception")
        finally:
            # A no-op when delivery already recorded the reply; frees the member otherwise.
            await self.routing.finish_turn(turn.bot_id, turn.group_id, turn.user_id)

    async def drain_background(self) -> None:
        """Wait for after-turn work (tests, shutdown)."""
        await self.reply.recorder.drain()
