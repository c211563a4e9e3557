"""Step 3, admit: whether a REPLY turn may run now, and in what shape.

    slot        per-group concurrency: at most N turns running, a bounded queue, then refusal
                (process-local by nature: it guards this process's own LLM calls; the verdict
                is the pure `decide_admission` from routing)
    freshness   an @ that waited behind the group's queue is judged again (`stage=queue`)
    cost        the cost guard: the daily budgets and the member's rate limit, before any LLM
                work; a refused turn ends here with at most one local phrase; a degraded one
                gets the ladder's shorter context; an admitted one holds its reply call counted
                ahead, given back when the turn ends without calling the model

The admitted turn (`ReplyTurn`) keeps its slot until its reply steps are done.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from pallas.core import state_keys
from pallas.core.clock import Clock
from pallas.core.state import StateStore
from pallas.features.cost import CostGuard
from pallas.routing.config import CooldownConfig
from pallas.routing.cooldown import AdmissionVerdict, decide_admission
from pallas.routing.freshness import FreshAction, FreshnessGate
from pallas.routing.router import Router
from pallas.turn.context import TurnContext
from pallas.turn.contracts import ReplyTurn, TurnOutcome, TurnResult
from pallas.turn.parts.cost_exit import note_verdict, refuse_turn
from pallas.turn.route import RoutedTurn

log = logging.getLogger("pallas.chat")


@dataclass
class _GroupSlots:
    running: int = 0
    queued: int = 0
    condition: asyncio.Condition = field(default_factory=asyncio.Condition)


class GroupAdmission:
    def __init__(self) -> None:
        self._groups: dict[tuple[int, str], _GroupSlots] = {}

    def _slots(self, bot_id: int, group_id: int, user_id: int) -> _GroupSlots:
        # a group's slots, or one private chat's (private chats never share a queue)
        key = (bot_id, state_keys.route_scope(group_id, user_id))
        return self._groups.setdefault(key, _GroupSlots())

    @contextlib.asynccontextmanager
    async def slot(
        self, bot_id: int, group_id: int, config: CooldownConfig, user_id: int = 0
    ) -> AsyncIterator[str | None]:
        """Yields None when the turn may run, or the refusal reason (`queue_full`)."""
        slots = self._slots(bot_id, group_id, user_id)
        refused: str | None = None
        async with slots.condition:
            verdict = decide_admission(
                config, running=slots.running, queued=slots.queued, user_in_flight=False
            )
            if verdict.verdict is AdmissionVerdict.REJECT:
                refused = verdict.reason
            else:
                if verdict.verdict is AdmissionVerdict.QUEUE:
                    slots.queued += 1
                    try:
                        await slots.condition.wait_for(
                            lambda: slots.running < config.max_concurrency
                        )
                    finally:
                        slots.queued -= 1
                slots.running += 1
        if refused is not None:
            yield refused
            return
        try:
            yield None
        finally:
            async with slots.condition:
                slots.running -= 1
                slots.condition.notify()


@dataclass
class AdmitStep:
    routing: Router
    freshness: FreshnessGate
    cost: CostGuard  # per-member rate limit and daily budgets
    state: StateStore
    clock: Clock
    superusers: frozenset[int] = frozenset()
    slots: GroupAdmission = field(default_factory=GroupAdmission)

    @contextlib.asynccontextmanager
    async def admitted(
        self, routed: RoutedTurn, turn_ctx: TurnContext
    ) -> AsyncIterator[ReplyTurn | TurnOutcome]:
        """Yields the admitted `ReplyTurn` (its group slot held until the block ends), or how
        the turn ended here (refused: queue full, stale after the queue, the cost guard)."""
        turn, config, route = routed.turn, routed.config, routed.route
        assert route is not None, "only a routed turn is admitted"
        cooldown = config.routing.cooldown
        async with self.slots.slot(turn.bot_id, turn.group_id, cooldown, turn.user_id) as no:
            if no is not None:
                log.warning("group %s: turn %s dropped (%s)", turn.group_id, turn.message_id, no)
                await self.routing.finish_turn(turn.bot_id, turn.group_id, turn.user_id)
                yield TurnOutcome(TurnResult.REJECTED, no)
                return
            fresh = routed.fresh
            if fresh.action is FreshAction.ANSWER:  # waited behind the group's queue?
                now, addressed = self.clock.now(), route.trigger.addressed
                fresh = await self.freshness.admit(turn, config, now, addressed, stage="queue")
                if not fresh.answers:
                    await self.routing.finish_turn(turn.bot_id, turn.group_id, turn.user_id)
                    yield TurnOutcome(TurnResult.STALE, fresh.reason)
                    return
            verdict = await self.cost.check(turn, route, config, self.clock.now())
            if not verdict.proceeds:
                yield await refuse_turn(
                    turn,
                    route,
                    config,
                    verdict,
                    turn_ctx.sender,
                    self.routing,
                    self.state,
                    self.superusers,
                )
                return
            await note_verdict(
                self.routing, self.superusers, route, config, verdict, turn_ctx.sender
            )
            route, config = verdict.shape(route, config)  # the ladder's shorter context
            try:
                yield ReplyTurn(
                    turn_ctx,
                    route,
                    config,
                    routed.persona,
                    routed.tool,
                    verdict,
                    short=fresh.action is FreshAction.SHORT,
                )
            finally:  # the call counted ahead is given back if the turn never made it
                await self.cost.release(verdict)
