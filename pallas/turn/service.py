"""One group message, start to finish (`ChatTurnService`): the spine's steps, in order.

    1 intake     the edge converted the message (`TurnInput`) and hands it over with where
                 answers go and its hold on the event loop (`TurnContext`)
    2 route      `RouteStep` (route.py): the member's line noted, freshness, the tool plan,
                 rules-only routing → what the message gets
      act        PASS phrase (one local phrase, no LLM) · merge into the member's in-flight
                 turn · retry an addressed message once the cooldown ends · or a REPLY turn:
    3 admit      `AdmitStep` (admit.py): the group's slot, freshness after the queue, the cost
                 guard
    4 prepare    `PrepareStep` (prepare.py): merge wait, rows, retrieval, tool, the request
    5 call       `CallStep` (call.py): the model call; with MCP tools offered
                 (`parts.tool_loop`), the calls the model asks for and the call again
    6 answer     `read_answer` (answer.py): svar tags out, output rules, bubbles, output guard
    7 deliver    `DeliverStep` (deliver.py): quote, sticker, paced bubbles
    8 remember   `TurnRecorder` (remember.py): the snapshot (every ending), the session
                 exchange and the after-turn hooks (a delivered answer only)

Every step is built once by the composition root (`pallas.app.build_app`) and handed in.
Failures are quiet for the group and loud in the log: nothing but parsed bubbles is ever sent.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pallas.context.pipeline import CoreProcessorError
from pallas.core.clock import Clock
from pallas.core.sending import Sender, Target
from pallas.core.state import MemoryStateStore, StateStore
from pallas.core.turn import CompletedTurn, TurnInput
from pallas.features.cost import CostGuard
from pallas.routing.accounts import FROM_OTHER_BOT
from pallas.routing.router import Router
from pallas.turn.admit import AdmitStep
from pallas.turn.answer import Answer, read_answer
from pallas.turn.call import CallStep
from pallas.turn.context import NO_HOLD, NO_OTHERS, LoopHold, OtherPlugins, Pause, TurnContext
from pallas.turn.contracts import (
    ModelCall,
    PreparedTurn,
    ReplyTurn,
    TurnOutcome,
    TurnResult,
)
from pallas.turn.deliver import DeliverStep
from pallas.turn.parts.accounts import AnswerClaims, no_other_bots
from pallas.turn.parts.delivery import joined_reply, send_phrase
from pallas.turn.parts.extras import TurnExtras
from pallas.turn.parts.merges import TurnMerges
from pallas.turn.parts.tool_loop import NO_OFFER, ModelTools, ToolOffer
from pallas.turn.prepare import PrepareStep
from pallas.turn.remember import TurnRecorder
from pallas.turn.route import NextStep, RoutedTurn, RouteStep

__all__ = ["ChatTurnService", "TurnOutcome"]

log = logging.getLogger("pallas.chat")

HANDLED_BY_PLUGIN = "handled_by_plugin"  # the route record's reason: `handled_by_plugin:<id>`


@dataclass
class ChatTurnService:
    """The orchestrator of a group turn over injected steps (see `pallas.app.build_app`)."""

    route_step: RouteStep  # step 2 (shared with `pallas replay`)
    admit: AdmitStep  # step 3
    prepare: PrepareStep  # step 4
    call: CallStep  # step 5
    deliver: DeliverStep  # step 7
    recorder: TurnRecorder  # step 8
    routing: Router
    merges: TurnMerges
    extras: TurnExtras  # session variables: the answer's ops are committed once delivered
    state: StateStore
    clock: Clock
    pause: Pause  # how every turn waits (tests swap its sleep)
    tools: ModelTools | None = None  # model-chosen MCP tools (none: never offered)
    # which account of the deployment answers a line (one account: always this one)
    accounts: AnswerClaims = field(
        default_factory=lambda: AnswerClaims(MemoryStateStore(), no_other_bots)
    )
    _warned_disabled: bool = False

    @property
    def cost(self) -> CostGuard:
        return self.admit.cost

    # -- 1 intake ------------------------------------------------------------------------------
    async def handle(
        self,
        turn: TurnInput,
        sender: Sender,
        *,
        hold: LoopHold | None = None,
        others: OtherPlugins = NO_OTHERS,
    ) -> TurnOutcome:
        """A message from the edge: its context, then the steps."""
        turn_ctx = TurnContext(
            turn, sender, self.pause, hold if hold is not None else NO_HOLD, others=others
        )
        return await self.run(turn_ctx)

    def anticipate(self, turn: TurnInput) -> None:
        """A line addressed to the bot was just read at the edge (its lane is the priority
        one): the context sources start their slow parts now (memory: the question's encode)
        instead of ~2 ms into the turn. A failure here only costs that head start."""
        try:
            config = self.route_step.group_config(turn.group_id)
            self.prepare.anticipate(turn, config, self.route_step.aliases(config))
        except Exception:  # e.g. a broken group config: the turn itself reports it
            log.debug("group %s: nothing anticipated for message %s", turn.group_id,
                      turn.message_id, exc_info=True)  # fmt: skip

    # -- 2 route, and act on it ----------------------------------------------------------------
    async def run(self, turn_ctx: TurnContext) -> TurnOutcome:
        verdict = self.accounts.verdict(turn_ctx.turn)
        if verdict.reason == FROM_OTHER_BOT:  # another account's line: never routed
            return TurnOutcome(TurnResult.SKIP, verdict.reason)
        routed = await self.route_step.route(
            turn_ctx.turn, attempt=turn_ctx.attempt, wait=turn_ctx.wait
        )
        return await self.act(routed, turn_ctx)

    async def act(self, routed: RoutedTurn, turn_ctx: TurnContext) -> TurnOutcome:
        turn, step, route = routed.turn, routed.step, routed.route
        if route is None:  # too old: recorded, not answered
            return TurnOutcome(TurnResult.STALE, routed.fresh.reason)
        if step in (NextStep.PASS_PHRASE, NextStep.REPLY):
            # an addressed line waits (bounded) for the bot's other plugins; others are not
            # delayed, only skipped when a plugin is already known to have answered them
            plugin = (
                await turn_ctx.others.settled()
                if route.trigger.addressed
                else turn_ctx.others.known()
            )
            if plugin is not None:  # another NoneBot plugin answered or took this line
                log.info(
                    "group %s: message %s handled by plugin %s, not answered",
                    turn.group_id,
                    turn.message_id,
                    plugin,
                )
                return await self._left_to_other_account(
                    routed, f"{HANDLED_BY_PLUGIN}:{plugin}", stage="plugin"
                )
            verdict = await self.accounts.may_answer(turn)
            if not verdict.answers:  # another account of the deployment answers this line
                return await self._left_to_other_account(routed, verdict.reason)
        if step is NextStep.PASS_PHRASE and route.phrase:
            sent = await send_phrase(
                turn.bot_id, Target.of(turn), route.phrase, turn_ctx.sender, self.state
            )
            return TurnOutcome(
                TurnResult.PASS_PHRASE, route.reason, () if sent is None else (sent,)
            )
        if step is NextStep.MERGE:
            await self.merges.park(turn)
            return TurnOutcome(TurnResult.MERGE, route.reason)
        if step is NextStep.RETRY:
            return await self._retry_later(routed, turn_ctx)
        if step is not NextStep.REPLY:
            return TurnOutcome(TurnResult(route.outcome.value), route.reason)
        # -- 3 admit ---------------------------------------------------------------------------
        async with self.admit.admitted(routed, turn_ctx) as admitted:
            if isinstance(admitted, TurnOutcome):
                return admitted
            return await self._reply_safely(admitted)

    async def _left_to_other_account(
        self, routed: RoutedTurn, reason: str, *, stage: str = "accounts"
    ) -> TurnOutcome:
        """Another account of the deployment, or another plugin of the bot, answers it."""
        turn, route = routed.turn, routed.route
        assert route is not None
        try:
            await self.routing.note(
                route, routed.config.routing, outcome="skip", stage=stage, reason=reason
            )
        finally:
            await self.routing.finish_turn(turn.bot_id, turn.group_id, turn.user_id)
        return TurnOutcome(TurnResult.SKIP, reason)

    async def _retry_later(self, routed: RoutedTurn, turn_ctx: TurnContext) -> TurnOutcome:
        """An addressed message that hit the group cooldown is answered once it ends."""
        wait = routed.retry_after_s()
        if wait is None:
            return TurnOutcome(TurnResult.ACCUMULATE, "retries_exhausted")
        await turn_ctx.wait(wait)
        return await self.run(turn_ctx.retried())

    async def _reply_safely(self, reply: ReplyTurn) -> TurnOutcome:
        turn = reply.turn
        try:
            return await self._reply(reply)
        except Exception:  # a bug in a step: the group hears nothing, the log has it all
            log.exception("group %s: reply to message %s failed", turn.group_id, turn.message_id)
            await self._note_failure(reply, "turn", "exception")
            return TurnOutcome(TurnResult.ERROR, "exception")
        finally:
            # A no-op when delivery already recorded the reply; frees the member otherwise.
            await self.routing.finish_turn(turn.bot_id, turn.group_id, turn.user_id)

    async def _reply(self, reply: ReplyTurn) -> TurnOutcome:
        turn = reply.turn
        if not self.call.enabled:
            if not self._warned_disabled:
                self._warned_disabled = True
                log.warning("reply skipped: no OPENAI_API_KEY configured (logged once)")
            return TurnOutcome(TurnResult.DISABLED, "no_api_key")
        # -- 4 prepare (the MCP tools on offer are listed meanwhile) -----------------------------
        offer = self._start_offer(reply)  # a task only where tools may be offered
        try:
            prepared = await self.prepare.run(reply)
        except CoreProcessorError as exc:
            log.error(
                "group %s: core processor %s failed: %s", turn.group_id, exc.processor_id, exc
            )
            await self._note_failure(reply, "prepare", f"core_processor:{exc.processor_id}")
            return TurnOutcome(TurnResult.ERROR, f"core_processor:{exc.processor_id}")
        prepared.snapshot.soon()  # built while the model is awaited (needed after it answers)
        # -- 5 call (and the tools the model asks for) ----------------------------------------
        prepared, call = await self._call(reply, prepared, await offer if offer else NO_OFFER)
        if not call.result.ok:
            self.recorder.save_snapshot(turn, prepared, f"error:{call.result.error}", call)
            error = call.result.error or "llm_error"
            await self._note_failure(reply, "llm", str(error), http_status=call.result.http_status)
            return TurnOutcome(TurnResult.ERROR, error, turn_id=prepared.turn_id)
        # -- 6 answer ------------------------------------------------------------------------------
        answer = read_answer(
            call.result.text,
            prepared.ctx,
            reply.persona,
            bot_id=turn.bot_id,
            group_id=turn.group_id,
        )
        if answer.parsed.silent:
            log.info("group %s: model chose silence (%s)", turn.group_id, answer.parsed.reason)
            self.recorder.save_snapshot(turn, prepared, "silent", call, answer.record)
            return TurnOutcome(TurnResult.SILENT, answer.parsed.reason, turn_id=prepared.turn_id)
        # -- 7 deliver -----------------------------------------------------------------------------
        outcome, answer = await self._deliver(reply, prepared, call, answer)
        # -- 8 remember ----------------------------------------------------------------------------
        self.recorder.save_snapshot(turn, prepared, outcome.outcome, call, answer.record)
        if outcome.outcome is TurnResult.DELIVERED:
            user_text = await self.merges.with_late_lines(turn, prepared.current_text)
            reply_text = joined_reply(answer.parsed.bubbles)
            self.recorder.append_session(turn, user_text, reply_text)
            self.recorder.after_turn(
                CompletedTurn(turn, user_text, reply_text, outcome.sent_ids, prepared.turn_id)
            )
        return TurnOutcome(outcome.outcome, outcome.reason, outcome.sent_ids, prepared.turn_id)

    async def _note_failure(
        self, reply: ReplyTurn, stage: str, reason: str, **more: object
    ) -> None:
        """The route log (and the console's error list) shows the turn failed, not just that
        it was meant to be a reply; a failure to note it is only logged."""
        try:
            await self.routing.note(
                reply.route, reply.config.routing, outcome="error", stage=stage, reason=reason,
                **more,
            )  # fmt: skip
        except Exception:
            log.exception("group %s: the failed turn was not noted", reply.turn.group_id)

    def _start_offer(self, reply: ReplyTurn) -> asyncio.Task[ToolOffer] | None:
        """List the MCP tools this turn may offer while the request is prepared (a server's
        first start takes a second); None where none can be (most turns)."""
        if self.tools is None or not self.tools.may_offer(reply):
            return None
        return asyncio.create_task(self.tools.offer(reply))

    async def _call(
        self, reply: ReplyTurn, prepared: PreparedTurn, offer: ToolOffer
    ) -> tuple[PreparedTurn, ModelCall]:
        """The model call; when MCP tools are offered, the tool loop runs the calls the model
        asks for and asks again (`parts.tool_loop`)."""
        call = await self.call.run(reply, prepared, offer.schemas)
        if self.tools is None or not offer.schemas:
            return prepared, call

        async def ask(again: PreparedTurn, tools: Sequence[Mapping[str, Any]]) -> ModelCall:
            return await self.call.run(reply, again, tools)

        return await self.tools.follow(
            reply, prepared, call, offer, ask=ask, reassemble=self.prepare.reassemble
        )

    async def _deliver(
        self, reply: ReplyTurn, prepared: PreparedTurn, call: ModelCall, answer: Answer
    ) -> tuple[TurnOutcome, Answer]:
        """Deliver; the answer's session-variable ops apply only once it was delivered whole
        (the group's next turn waits for them from the last bubble on)."""
        turn, config, ops = reply.turn, reply.config, answer.svar_ops
        hold = self.extras.svar_hold(turn, config, ops)
        try:
            outcome = await self.deliver.run(reply, answer.parsed, before_final=hold.engage)
            total_local = (time.perf_counter() - prepared.started) * 1000 - call.result.latency_ms
            svars = None
            if ops:
                svars = (
                    await self.extras.commit_svars(turn, config, ops, prepared.turn_id)
                    if outcome.outcome is TurnResult.DELIVERED
                    else {"reason": f"not_applied:{outcome.outcome}", "tags": len(ops)}
                )
        finally:
            hold.release()
        record = replace(
            answer.record,
            sent_message_ids=list(outcome.sent_ids),
            total_local_ms=round(total_local, 3),
            svars=svars,
        )
        return outcome, replace(answer, record=record)

    async def drain_background(self) -> None:
        """Wait for after-turn work (tests, shutdown)."""
        await self.recorder.drain()
