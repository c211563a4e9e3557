"""The reply step of a REPLY turn (`ReplyStep`): prepare → call the model → answer → deliver →
remember.

    prepare    merge quick follow-ups → fetch rows (warm caches) ‖ retrieval ‖ the planned tool
               → rules → build the request (pipeline, budget, formatter)
    call       one LLM call (images attached for vision models), counted by the cost guard
    answer     session-variable tags out, output rules, parse bubbles, output guard
    deliver    quote target, sticker, paced bubbles, routing's record of the bot reply
    remember   `TurnRecorder` (reply_record.py): snapshot (every ending), session turns and
               after-turn hooks (delivered only)

`ChatTurnService` (chat_turn.py) runs it after admission, freshness and the cost guard let the
turn through; every part it uses is handed in by the composition root (`pallas.app`).
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypeVar

from pallas.config import GroupConfig
from pallas.context.analyzer import build_snapshot
from pallas.context.context import (
    ChatContextBundle,
    ContextSource,
    GatherRequest,
    assemble_direct_chat_context,
)
from pallas.context.pipeline import CoreProcessorError
from pallas.context.pipeline_cache import ChatPipelines
from pallas.context.processor_inputs import ChatTurnContext
from pallas.context.snapshot import TurnSnapshot
from pallas.context.turn_rules import apply_output_rules, rules_for_turn
from pallas.core.clock import Clock
from pallas.core.db.message_cache import MessageCache
from pallas.core.db.repositories.messages import MessageRepository
from pallas.core.db.session_cache import SessionCache
from pallas.core.deferred import Deferred
from pallas.core.eager import eager_gather
from pallas.core.state import StateStore
from pallas.core.turn import CompletedTurn, TurnInput
from pallas.features.cost import CostGuard
from pallas.features.stickers import StickerService
from pallas.features.svars import split_svar_tags
from pallas.features.tools import ToolRegistry, ToolTurnContext, run_planned_tool
from pallas.providers.client import LLMClient
from pallas.providers.models import ModelProfile, profile_for
from pallas.routing.evaluate import RouteOutcome, RouteResult
from pallas.routing.freshness import STALE_REPLY_SHAPE
from pallas.routing.merge_wait import MergeWaitDecision
from pallas.routing.router import Router
from pallas.turn.bubbles import ParsedReply, parse_reply
from pallas.turn.chat_pipeline import assemble_chat_request, chat_pipelines
from pallas.turn.contracts import (
    AnswerRecord,
    ModelCall,
    Pause,
    PreparedTurn,
    TurnOutcome,
    TurnResult,
)
from pallas.turn.deliver import DeliveryPlan, deliver, joined_reply
from pallas.turn.extras import TurnExtras
from pallas.turn.merges import TurnMerges
from pallas.turn.output_guard import guard_parsed_reply
from pallas.turn.remember import TurnRecorder
from pallas.turn.route import ReplyTurn
from pallas.turn.turn_context import TurnRows, build_chat_turn_context, fetch_turn_rows
from pallas.turn.vision import QuotedMessageFetcher, prepare_vision_request

log = logging.getLogger("pallas.chat")

Flush = Callable[[int], Awaitable[None]]
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class GatheredTurn:
    """What the prepare step gathered before it builds the context."""

    wait: MergeWaitDecision
    current_text: str  # this message plus the member's merged follow-ups
    merged_images: tuple[str, ...]  # image urls of the merged follow-ups
    rows: TurnRows
    bundle: ChatContextBundle  # retrieval: memory, learning, old topics …
    tool: ToolTurnContext  # the planned tool's result (empty when no tool ran)


@dataclass
class ReplyStep:
    """One REPLY turn after admission: prepare, one LLM call, answer, deliver, remember."""

    llm: LLMClient
    clock: Clock
    state: StateStore
    routing: Router
    merges: TurnMerges
    cost: CostGuard
    stickers: StickerService
    turn_extras: TurnExtras  # session variables, kb placeholders, attachments
    recorder: TurnRecorder
    # the newest group lines and session windows, kept warm at ingest (no DB on the reply path)
    message_cache: MessageCache
    session_cache: SessionCache
    flush: Flush  # the group's pending ingest writes (before a tool counts stored rows)
    messages: MessageRepository  # tool activity ranking, images of quoted lines
    config_dir: Path  # regex / worldbook rule files
    pause: Pause
    rng: random.Random
    tools: ToolRegistry
    sources: Sequence[ContextSource] = ()
    nicknames: tuple[str, ...] = ()  # the bot's first nickname names it in the prompt
    # OneBot get_msg for quoted images the message store lacks (set by the NoneBot edge)
    fetch_quoted_message: QuotedMessageFetcher | None = None
    # the chat pipelines (built once per order / disabled setting) and the token counter of
    # the budget and the snapshot (exact counts from cached line counts)
    pipelines: ChatPipelines = field(default_factory=chat_pipelines)
    _warned_disabled: bool = False

    async def run(self, reply: ReplyTurn) -> TurnOutcome:
        turn = reply.turn
        if not self.llm.enabled:
            if not self._warned_disabled:
                self._warned_disabled = True
                log.warning("reply skipped: no OPENAI_API_KEY configured (logged once)")
            return TurnOutcome(TurnResult.DISABLED, "no_api_key")
        try:
            prepared = await self.prepare(reply)
        except CoreProcessorError as exc:
            log.error(
                "group %s: core processor %s failed: %s", turn.group_id, exc.processor_id, exc
            )
            return TurnOutcome(TurnResult.ERROR, f"core_processor:{exc.processor_id}")
        prepared.snapshot.soon()  # built while the model is awaited (needed after it answers)
        call = await self._call_model(reply, prepared)
        if not call.result.ok:
            self.recorder.save_snapshot(turn, prepared, f"error:{call.result.error}", call)
            error = call.result.error or "llm_error"
            return TurnOutcome(TurnResult.ERROR, error, turn_id=prepared.turn_id)
        return await self._answer(reply, prepared, call)

    # -- prepare -------------------------------------------------------------------------------
    async def prepare(self, reply: ReplyTurn) -> PreparedTurn:
        """Merge quick follow-ups, fetch rows, retrieve, run the tool, build the request."""
        stage_ms: dict[str, float] = {}
        started = time.perf_counter()
        got = await self._gather(reply, stage_ms, started)
        mark = time.perf_counter()
        model = reply.cost.model or self.llm.model_for("chat")
        profile = profile_for(reply.config.models, model)
        ctx = await self._turn_context(reply, got, profile)
        request = await assemble_chat_request(ctx, self.pipelines.for_config(ctx.config))
        _stopwatch(stage_ms, "assemble", mark)
        count = self.pipelines.tokens.count

        def snapshot() -> TurnSnapshot:  # needed after the answer: built while it is awaited
            return replace(
                build_snapshot(
                    request,
                    got.bundle,
                    decision=reply.route.to_log_dict(),
                    stage_ms=stage_ms,
                    count=count,
                ),
                tool=got.tool.trace,
                merge_wait=got.wait.to_log_dict(),
                cost=reply.cost.to_log_dict() if reply.cost.noteworthy else None,
            )

        return PreparedTurn(
            turn_id=uuid.uuid4().hex,
            current_text=got.current_text,
            ctx=ctx,
            messages=request.messages,
            model=model,
            profile=profile,
            snapshot=Deferred(snapshot),
            started=started,
            merged_image_urls=got.merged_images,
        )

    async def _gather(
        self, reply: ReplyTurn, stage_ms: dict[str, float], started: float
    ) -> GatheredTurn:
        """The merge wait, then the turn's rows, retrieval and the planned tool side by side."""
        turn, route, config = reply.turn, reply.route, reply.config
        wait = await self.merges.wait_decision(
            turn, route.trigger.content_text, config.chat, self.clock.now()
        )
        if wait.waits:  # only when the message looks unfinished (merge_wait.py)
            await self.pause(wait.wait_s)
        current_text, merged_images = await self.merges.current_text(turn, route.accumulated)
        mark = _stopwatch(stage_ms, "merge_wait", started)
        if route.outcome is RouteOutcome.TOOL:  # tools count stored rows (activity ranking)
            await self.flush(turn.group_id)
        # The rows, retrieval and the planned tool are independent: one round of waits, not
        # three ("fetch_rows" is its own time, "retrieval" the time until all three are done).
        # Without a tool they are stepped eagerly: warm reads finish without a loop round (a
        # tool runs under `asyncio.timeout`, which needs a task of its own).
        together = eager_gather if reply.tool.call is None else asyncio.gather
        rows, bundle, tool = await together(
            _timed(self._fetch_rows(turn, route, config), stage_ms, "fetch_rows"),
            assemble_direct_chat_context(
                self.sources, _gather_request(reply, current_text, self.clock.now())
            ),
            run_planned_tool(
                reply.tool,
                self.tools,
                tool_turn=route.outcome is RouteOutcome.TOOL,
                turn=turn,
                now=self.clock.now(),
                rng=self.rng,
                activity=self.messages,
                timeout_s=config.tools.timeout_s,
            ),
        )
        _stopwatch(stage_ms, "retrieval", mark)
        return GatheredTurn(wait, current_text, merged_images, rows, bundle, tool)

    async def _turn_context(
        self, reply: ReplyTurn, got: GatheredTurn, profile: ModelProfile
    ) -> ChatTurnContext:
        """Freeze what was gathered into the processors' input (rules, pipeline state, the
        stale reply shape, the group's sticker names)."""
        turn, route, config, persona = reply.turn, reply.route, reply.config, reply.persona
        ctx = build_chat_turn_context(
            turn,
            route,
            current_text=got.current_text,
            rows=got.rows,
            bundle=got.bundle,
            config=config,
            persona=persona,
            profile=profile,
            bot_nickname=next(iter(self.nicknames), persona.name),
            now=self.clock.now(),
            tool=got.tool,
            tool_turn=route.outcome is RouteOutcome.TOOL,
            rules=rules_for_turn(
                turn,
                config=config,
                persona=persona,
                timeline=got.rows.timeline,
                tool_results=got.tool.results,
                tool_rules=got.tool.rules,
                now=self.clock.now(),
                config_dir=self.config_dir,
            ),
        )
        ctx = await self.turn_extras.enrich(
            ctx,
            turn,
            config,
            profile,
            addressed=route.trigger.addressed,
            image_count=len(turn.image_urls) + len(got.merged_images),
        )
        if reply.short:  # a stale @: one short bubble to the member's latest message
            ctx = replace(ctx, reply_shape=STALE_REPLY_SHAPE)
        if config.chat.allow_sticker:  # the contract lists the group's own sticker names
            names = await self.stickers.prompt_names(turn.bot_id, turn.group_id, config.stickers)
            ctx = replace(ctx, sticker_names=names)
        return ctx

    async def _fetch_rows(
        self, turn: TurnInput, route: RouteResult, config: GroupConfig
    ) -> TurnRows:
        """Timeline and session rows from the warm caches (no DB on a warm group)."""
        return await fetch_turn_rows(
            turn,
            timeline_width=route.trigger.timeline_width,
            config=config,
            messages=self.message_cache,
            sessions=self.session_cache,
            state=self.state,
        )

    # -- call the model ----------------------------------------------------------------------
    async def _call_model(self, reply: ReplyTurn, prepared: PreparedTurn) -> ModelCall:
        """The one LLM call of the turn (images attached for vision models)."""
        turn, config, cost = reply.turn, reply.config, reply.cost
        # Images: a vision model gets this turn's images (and those of merged follow-ups) as
        # data-URL blocks, the snapshot keeps only their hashes; for a text-only model nothing
        # is downloaded.
        if prepared.merged_image_urls:
            turn = replace(turn, image_urls=(*turn.image_urls, *prepared.merged_image_urls))
        vision = await prepare_vision_request(
            prepared.messages,
            turn=turn,
            vision_enabled=prepared.profile.supports_images and not cost.text_only,
            images=config.images,
            store=self.messages,
            fetch_quoted=self.fetch_quoted_message,
        )
        result = await self.llm.complete(
            "chat",
            vision.messages,
            bot_id=turn.bot_id,
            group_id=turn.group_id,
            max_tokens=prepared.profile.max_output_tokens,
            temperature=prepared.profile.temperature,
            model=prepared.model,
        )
        # today's counters for the budgets (cheap to read per turn)
        images = bool(vision.trace.get("attached"))
        tokens = result.prompt_tokens + result.completion_tokens
        await self.cost.record(turn, self.clock.now(), images=images, tokens=tokens)
        return ModelCall(result, request=vision.snapshot, vision=vision.trace)

    # -- answer, deliver, remember -----------------------------------------------------------
    async def _answer(
        self, reply: ReplyTurn, prepared: PreparedTurn, call: ModelCall
    ) -> TurnOutcome:
        """Parse the answer into bubbles, deliver, and remember the exchange."""
        turn, config, persona = reply.turn, reply.config, reply.persona
        shape = prepared.ctx.reply_shape
        answer, svar_ops = split_svar_tags(call.result.text)  # tags never reach the group
        answer, output_regex = apply_output_rules(answer, prepared.ctx.rules)
        parsed = parse_reply(
            answer,
            max_segments=shape.max_segments,
            max_chars=shape.max_chars,
            speaker_names=(persona.name, persona.bot_label, persona.assistant_label),
            bot_id=turn.bot_id,
        )
        parsed, guard = guard_parsed_reply(parsed, persona)  # before delivery and history
        if guard != "ok":
            log.warning("group %s: model answer guarded (%s)", turn.group_id, guard)
        record = AnswerRecord(
            output_regex=output_regex,
            bubbles=list(parsed.bubbles),
            parse={"reason": parsed.reason, "notes": list(parsed.notes)},
        )
        if parsed.silent:
            log.info("group %s: model chose silence (%s)", turn.group_id, parsed.reason)
            self.recorder.save_snapshot(turn, prepared, "silent", call, record)
            return TurnOutcome(TurnResult.SILENT, parsed.reason, turn_id=prepared.turn_id)
        hold = self.turn_extras.svar_hold(turn, config, svar_ops)
        try:
            outcome = await self._deliver(reply, parsed, before_final=hold.engage)
            total_local = (time.perf_counter() - prepared.started) * 1000 - call.result.latency_ms
            svars = None
            if svar_ops:  # only a completely delivered answer changes session variables
                svars = (
                    await self.turn_extras.commit_svars(turn, config, svar_ops, prepared.turn_id)
                    if outcome.outcome == "delivered"
                    else {"reason": f"not_applied:{outcome.outcome}", "tags": len(svar_ops)}
                )
        finally:
            hold.release()
        record = replace(
            record,
            sent_message_ids=list(outcome.sent_ids),
            total_local_ms=round(total_local, 3),
            svars=svars,
        )
        self.recorder.save_snapshot(turn, prepared, outcome.outcome, call, record)
        if outcome.outcome == "delivered":
            user_text = await self.merges.with_late_lines(turn, prepared.current_text)
            reply_text = joined_reply(parsed.bubbles)
            self.recorder.append_session(turn, user_text, reply_text)
            self.recorder.after_turn(
                CompletedTurn(turn, user_text, reply_text, outcome.sent_ids, prepared.turn_id)
            )
        return TurnOutcome(outcome.outcome, outcome.reason, outcome.sent_ids, prepared.turn_id)

    async def _deliver(
        self, reply: ReplyTurn, parsed: ParsedReply, *, before_final: Callable[[], None]
    ) -> TurnOutcome:
        turn, route, config, sender = reply.turn, reply.route, reply.config, reply.sender
        quote_id = None
        if route.outcome is RouteOutcome.QUOTE and route.decision is not None:
            quote_id = await self.routing.resolve_quote_target(
                turn.bot_id, turn.group_id, route.decision.reply_message_id, turn.user_id
            )
        sticker = await self.stickers.for_reply(
            turn.bot_id, turn.group_id, parsed.sticker, config.chat.allow_sticker, config.stickers
        )
        if not parsed.bubbles and sticker is None:
            return TurnOutcome(TurnResult.SILENT, "sticker_unavailable")
        plan = DeliveryPlan(
            bot_id=turn.bot_id,
            group_id=turn.group_id,
            bubbles=parsed.bubbles,
            quote_message_id=quote_id,
            at_user_id=turn.user_id if config.chat.at_sender_on_first_bubble else None,
            sticker=sticker.segment if sticker is not None else None,
        )
        delivery = await deliver(
            plan, sender, self.state, rng=self.rng, sleep=self.pause, before_final=before_final
        )
        if sticker is not None and delivery.complete and delivery.sent_ids:
            await self.stickers.remember_sent(sticker, delivery.sent_ids[-1])
        if delivery.sent_ids:
            await self.routing.record_bot_reply(
                turn.bot_id,
                turn.group_id,
                turn.user_id,
                delivery.sent_ids,
                self.clock.now(),
                config=config.routing,
            )
        outcome = TurnResult.DELIVERED if delivery.complete else TurnResult.PARTIAL
        return TurnOutcome(outcome, delivery.reason, delivery.sent_ids)


def _gather_request(reply: ReplyTurn, current_text: str, now: float) -> GatherRequest:
    route, decision = reply.route, reply.route.decision
    return GatherRequest(
        turn=reply.turn,
        current_text=current_text,
        now=now,
        config=reply.config,
        persona_name=reply.persona.name,
        allow_persistent_memory=bool(decision and decision.allow_persistent_memory),
        short_social=bool(decision and not decision.allow_persistent_memory),
        addressed=route.trigger.addressed,
    )


async def _timed(work: Awaitable[T], stages: dict[str, float], name: str) -> T:
    started = time.perf_counter()
    result = await work
    _stopwatch(stages, name, started)
    return result


def _stopwatch(stages: dict[str, float], name: str, since: float) -> float:
    now = time.perf_counter()
    stages[name] = round((now - since) * 1000, 3)
    return now
