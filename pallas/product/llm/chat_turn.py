"""One group message, start to finish: route → (phrase | reply) → deliver → remember.

    tool plan      which local tool the message asks for, and whether this member may use it
    route          rules only: REPLY / QUOTE / FOLLOW_UP / TOOL, PASS phrase, silence
    PASS phrase    one local ≤12-char phrase, no LLM
    reply          merge quick follow-ups → gather context (+ the tool's result on a TOOL turn)
                   → assemble request (pipeline, budget, formatter) → one LLM call → parse
                   bubbles → deliver → session,
                   snapshot → after-turn hooks in the background

Failures are quiet for the group and loud in the log: nothing but parsed bubbles is ever sent.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from pallas.core.db.repositories.snapshots import InjectionSnapshot
from pallas.core.db.repositories.stickers import StickerRepository
from pallas.core.db.warm_messages import WarmMessages
from pallas.core.db.warm_sessions import WarmSessions
from pallas.core.records import SessionTurn
from pallas.core.turn import TurnInput
from pallas.product.config import GroupConfig
from pallas.product.llm.addressing import Addressing
from pallas.product.llm.admission import GroupAdmission
from pallas.product.llm.chat_turn_contracts import (
    AfterTurnHook,
    CompletedTurn,
    PhraseSource,
    PreparedTurn,
    TurnOutcome,
)
from pallas.product.llm.context.analyzer import snapshot_data
from pallas.product.llm.context.context import (
    ContextSource,
    GatherRequest,
    assemble_direct_chat_context,
)
from pallas.product.llm.context.message_text import session_user_content
from pallas.product.llm.context.pipeline import CoreProcessorError
from pallas.product.llm.context.processors import build_chat_pipeline
from pallas.product.llm.context.request import assemble_chat_request
from pallas.product.llm.context.turn_rules import apply_output_rules, rules_for_turn
from pallas.product.llm.cost.guard import PROCEED, CostGuard
from pallas.product.llm.cost.turn_exit import guard_for, note_verdict, refuse_turn
from pallas.product.llm.delivery.bubbles import parse_reply
from pallas.product.llm.delivery.delivery import (
    DeliveryPlan,
    GroupSender,
    deliver,
    joined_reply,
    send_phrase,
)
from pallas.product.llm.delivery.output_guard import guard_parsed_reply
from pallas.product.llm.freshness import STALE_REPLY_SHAPE, FreshAction, FreshnessGate
from pallas.product.llm.merges import TurnMerges
from pallas.product.llm.persona.pack import PersonaPack
from pallas.product.llm.provider.client import CompletionResult
from pallas.product.llm.provider.models import profile_for
from pallas.product.llm.provider.vision_messages import (
    QuotedMessageFetcher,
    prepare_vision_request,
)
from pallas.product.llm.reply_context import (
    TurnRows,
    build_chat_turn_context,
    fetch_turn_rows,
)
from pallas.product.llm.routing.route_pipeline import RouteOutcome, RouteResult
from pallas.product.llm.routing.router import RoutingEngine
from pallas.product.llm.stickers.service import StickerService
from pallas.product.llm.svars.ops import split_svar_tags
from pallas.product.llm.tools.registry import ToolRegistry, default_registry
from pallas.product.llm.tools.service import run_planned_tool
from pallas.product.llm.turn_route import NextStep, ReplyTurn, RoutedTurn, TurnRouter

# ()
from pallas.runtime import PallasRuntime

if TYPE_CHECKING:  # pipeline_state → memory.factory → extraction_hook → chat_turn
    from pallas.product.llm.pipeline_state import PipelineState

__all__ = ["AfterTurnHook", "ChatTurnService", "CompletedTurn", "TurnOutcome"]

log = logging.getLogger("pallas.chat")

Sleep = Callable[[float], Awaitable[None]]


@dataclass
class ChatTurnService:
    runtime: PallasRuntime
    routing: RoutingEngine
    rng: random.Random = field(default_factory=random.Random)
    sleep: Sleep = asyncio.sleep
    sources: Sequence[ContextSource] = ()
    hooks: Sequence[AfterTurnHook] = ()
    admission: GroupAdmission = field(default_factory=GroupAdmission)
    # the group's own short expressions for the PASS phrase pool (group learning)
    phrases: PhraseSource | None = None
    # OneBot get_msg for quoted images the message store lacks (set by the llm_chat plugin)
    fetch_quoted_message: QuotedMessageFetcher | None = None
    tools: ToolRegistry = field(default_factory=default_registry)
    # session variables, kb placeholders, attachments (issue 12); None = those stay inert
    pipeline_state: PipelineState | None = None
    cost: CostGuard | None = None  # per-member rate limit and daily budgets (cost guard)
    addressing: Addressing = field(default_factory=Addressing)
    stickers: StickerService | None = None  # None: built over the runtime
    merges: TurnMerges = field(init=False)
    freshness: FreshnessGate = field(init=False)
    router: TurnRouter = field(init=False)  # the route step (shared with `pallas replay`)
    # the newest group lines and session windows, kept warm at ingest (no DB on the reply path)
    warm_messages: WarmMessages = field(init=False)
    warm_sessions: WarmSessions = field(init=False)
    _background: set[asyncio.Task[None]] = field(default_factory=set)
    _warned_disabled: bool = False

    def __post_init__(self) -> None:
        self.merges = TurnMerges(self.runtime.state)
        self.freshness = FreshnessGate(
            self.runtime.state, self.routing, sleep=lambda s: self.sleep(s)
        )
        if self.stickers is None:
            self.stickers = StickerService(
                StickerRepository(self.runtime.sessions),
                self.runtime.state,
                self.runtime.clock,
                self.runtime.group_configs.get,
            )
        rt = self.runtime
        self.router = TurnRouter(
            clock=rt.clock,
            routing=self.routing,
            group_config=rt.group_configs.get,
            persona=rt.personas.get,
            addressing=self.addressing,
            merges=self.merges,
            freshness=self.freshness,
            tools=self.tools,
            rng=self.rng,
            superusers=rt.superusers,
            phrases=self.phrases,
        )
        if self.cost is None:
            self.cost = guard_for(
                rt.settings, rt.llm, rt.state, rt.repos.usage, rt.superusers, rng=self.rng
            )
        self.warm_messages = WarmMessages(rt.repos.messages, flush=rt.writer.flush)
        rt.writer.listeners.append(self.warm_messages.note)
        rt.repos.messages.listeners.append(self.warm_messages.note_many)
        self.warm_sessions = WarmSessions.of(rt.repos.chat_sessions)

    # -- entry -------------------------------------------------------------------------------
    async def handle(
        self, turn: TurnInput, sender: GroupSender, *, attempt: int = 0
    ) -> TurnOutcome:
        """The route step, then what it asks for (phrase, merge, retry, reply)."""
        return await self.act(await self.router.route(turn, attempt=attempt), sender)

    async def act(self, routed: RoutedTurn, sender: GroupSender) -> TurnOutcome:
        rt, turn, config, step = self.runtime, routed.turn, routed.config, routed.step
        route = routed.route
        if route is None:  # too old: recorded, not answered
            return TurnOutcome("stale", routed.fresh.reason)
        if step is NextStep.PASS_PHRASE and route.phrase:
            sent = await send_phrase(turn.bot_id, turn.group_id, route.phrase, sender, rt.state)
            return TurnOutcome("pass_phrase", route.reason, () if sent is None else (sent,))
        if step is NextStep.MERGE:
            await self.merges.park(turn)
            return TurnOutcome("merge", route.reason)
        if step is NextStep.RETRY:
            return await self._retry_later(routed, sender)
        if step is not NextStep.REPLY:
            return TurnOutcome(route.outcome.value, route.reason)
        async with self.admission.slot(turn.bot_id, turn.group_id, config.routing.cooldown) as no:
            if no is not None:
                log.warning("group %s: turn %s dropped (%s)", turn.group_id, turn.message_id, no)
                await self.routing.finish_turn(turn.bot_id, turn.group_id, turn.user_id)
                return TurnOutcome("rejected", no)
            fresh = routed.fresh
            if fresh.action is FreshAction.ANSWER:  # waited behind the group's queue?
                now, addressed = rt.clock.now(), route.trigger.addressed
                fresh = await self.freshness.admit(turn, config, now, addressed, stage="queue")
                if not fresh.answers:
                    await self.routing.finish_turn(turn.bot_id, turn.group_id, turn.user_id)
                    return TurnOutcome("stale", fresh.reason)
            # cost guard: budgets and the member's rate limit, before any LLM work
            now = rt.clock.now()
            verdict = (
                PROCEED if self.cost is None else await self.cost.check(turn, route, config, now)
            )
            if not verdict.proceeds:
                return await refuse_turn(
                    turn, route, config, verdict, sender, rt.routing, rt.state, rt.superusers
                )
            await note_verdict(rt.routing, rt.superusers, route, config, verdict, sender)
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
            return TurnOutcome("accumulate", "retries_exhausted")
        await self.sleep(wait)
        return await self.handle(routed.turn, sender, attempt=routed.attempt + 1)

    async def _reply_safely(self, reply: ReplyTurn) -> TurnOutcome:
        turn = reply.turn
        try:
            return await self._reply(reply)
        except Exception:
            log.exception("group %s: reply to message %s failed", turn.group_id, turn.message_id)
            return TurnOutcome("error", "exception")
        finally:
            # A no-op when delivery already recorded the reply; frees the member otherwise.
            await self.routing.finish_turn(turn.bot_id, turn.group_id, turn.user_id)

    # -- the reply path ------------------------------------------------------------------------
    async def _reply(self, reply: ReplyTurn) -> TurnOutcome:
        turn = reply.turn
        if not self.runtime.llm.enabled:
            if not self._warned_disabled:
                self._warned_disabled = True
                log.warning("reply skipped: no OPENAI_API_KEY configured (logged once)")
            return TurnOutcome("disabled", "no_api_key")
        try:
            prepared = await self._prepare(reply)
        except CoreProcessorError as exc:
            log.error(
                "group %s: core processor %s failed: %s", turn.group_id, exc.processor_id, exc
            )
            return TurnOutcome("error", f"core_processor:{exc.processor_id}")
        result = await self._call_model(reply, prepared)
        if not result.ok:
            await self._save_snapshot(turn, prepared, f"error:{result.error}")
            return TurnOutcome("error", result.error or "llm_error", turn_id=prepared.turn_id)
        return await self._answer(reply, prepared, result)

    async def _prepare(self, reply: ReplyTurn) -> PreparedTurn:
        """Merge quick follow-ups, fetch rows, retrieve, run the tool, build the request."""
        turn, route, config, persona = reply.turn, reply.route, reply.config, reply.persona
        tool, cost, short = reply.tool, reply.cost, reply.short
        rt = self.runtime
        stage_ms: dict[str, float] = {}
        started = time.perf_counter()
        content = route.trigger.content_text
        wait = await self.merges.wait_decision(turn, content, config.chat, rt.clock.now())
        if wait.waits:  # only when the message looks unfinished (merge_wait.py)
            await self.sleep(wait.wait_s)
        current_text, merged_images = await self.merges.current_text(turn, route.accumulated)
        mark = _stopwatch(stage_ms, "merge_wait", started)
        rows = await self._fetch_rows(turn, route, config)
        mark = _stopwatch(stage_ms, "fetch_rows", mark)
        bundle, tool_ctx = await asyncio.gather(
            assemble_direct_chat_context(
                self.sources, _gather_request(turn, route, config, persona, current_text, rt)
            ),
            run_planned_tool(
                tool,
                self.tools,
                tool_turn=route.outcome is RouteOutcome.TOOL,
                turn=turn,
                now=rt.clock.now(),
                rng=self.rng,
                activity=rt.repos.messages,
                timeout_s=config.tools.timeout_s,
            ),
        )
        mark = _stopwatch(stage_ms, "retrieval", mark)
        model = cost.model or rt.llm.model_for("chat")
        profile = profile_for(config.models, model)
        ctx = build_chat_turn_context(
            turn,
            route,
            current_text=current_text,
            rows=rows,
            bundle=bundle,
            config=config,
            persona=persona,
            profile=profile,
            bot_nickname=next(iter(rt.nicknames), persona.name),
            now=rt.clock.now(),
            tool=tool_ctx,
            tool_turn=route.outcome is RouteOutcome.TOOL,
            rules=rules_for_turn(
                turn,
                config=config,
                persona=persona,
                timeline=rows.timeline,
                tool_results=tool_ctx.results,
                tool_rules=tool_ctx.rules,
                now=rt.clock.now(),
                config_dir=rt.settings.pallas_config_dir,
            ),
        )
        if self.pipeline_state is not None:
            ctx = await self.pipeline_state.enrich(
                ctx,
                turn,
                config,
                profile,
                addressed=route.trigger.addressed,
                image_count=len(turn.image_urls) + len(merged_images),
            )
        if short:  # a stale @: one short bubble to the member's latest message
            ctx = replace(ctx, reply_shape=STALE_REPLY_SHAPE)
        if config.chat.allow_sticker:  # the contract lists the group's own sticker names
            names = await self.stickers.prompt_names(turn.bot_id, turn.group_id, config.stickers)
            ctx = replace(ctx, sticker_names=names)
        request = await assemble_chat_request(ctx, build_chat_pipeline(ctx.config))
        _stopwatch(stage_ms, "assemble", mark)
        data = snapshot_data(request, bundle, decision=route.to_log_dict(), stage_ms=stage_ms)
        if tool_ctx.trace is not None:
            data["tool"] = tool_ctx.trace
        data["merge_wait"] = wait.to_log_dict()
        if cost.noteworthy:
            data["cost"] = cost.to_log_dict()
        return PreparedTurn(
            turn_id=uuid.uuid4().hex,
            current_text=current_text,
            ctx=ctx,
            messages=request.messages,
            model=model,
            profile=profile,
            data=data,
            started=started,
            merged_image_urls=merged_images,
        )

    async def _fetch_rows(
        self, turn: TurnInput, route: RouteResult, config: GroupConfig
    ) -> TurnRows:
        """Timeline and session rows from the warm caches (no DB on a warm group)."""
        rt = self.runtime
        if route.outcome is RouteOutcome.TOOL:  # tools count stored rows (activity ranking)
            await rt.writer.flush(turn.group_id)
        return await fetch_turn_rows(
            turn,
            timeline_width=route.trigger.timeline_width,
            config=config,
            messages=self.warm_messages,
            sessions=self.warm_sessions,
            state=rt.state,
        )

    async def _call_model(self, reply: ReplyTurn, prepared: PreparedTurn) -> CompletionResult:
        """The one LLM call of the turn (images attached for vision models)."""
        turn, config, cost = reply.turn, reply.config, reply.cost
        rt = self.runtime
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
            store=rt.repos.messages,
            fetch_quoted=self.fetch_quoted_message,
        )
        data = prepared.data
        data["request"], data["vision"] = vision.snapshot, vision.trace
        result = await rt.llm.complete(
            "chat",
            vision.messages,
            bot_id=turn.bot_id,
            group_id=turn.group_id,
            max_tokens=prepared.profile.max_output_tokens,
            temperature=prepared.profile.temperature,
            model=prepared.model,
        )
        if self.cost is not None:  # today's counters for the budgets (cheap to read per turn)
            images = bool(vision.trace.get("attached"))
            tokens = result.prompt_tokens + result.completion_tokens
            await self.cost.record(turn, rt.clock.now(), images=images, tokens=tokens)
        data["usage"] = {
            "prompt_tokens": result.prompt_tokens,
            "completion_tokens": result.completion_tokens,
            "latency_ms": round(result.latency_ms, 1),
        }
        data["response"] = result.text
        return result

    async def _answer(
        self, reply: ReplyTurn, prepared: PreparedTurn, result: CompletionResult
    ) -> TurnOutcome:
        """Parse the answer into bubbles, deliver, and remember the exchange."""
        turn, config, persona = reply.turn, reply.config, reply.persona
        shape, data = prepared.ctx.reply_shape, prepared.data
        answer, svar_ops = split_svar_tags(result.text)  # tags never reach the group
        answer, data["output_regex"] = apply_output_rules(answer, prepared.ctx.rules)
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
        data["bubbles"] = list(parsed.bubbles)
        data["parse"] = {"reason": parsed.reason, "notes": list(parsed.notes)}
        if parsed.silent:
            log.info("group %s: model chose silence (%s)", turn.group_id, parsed.reason)
            await self._save_snapshot(turn, prepared, "silent")
            return TurnOutcome("silent", parsed.reason, turn_id=prepared.turn_id)
        outcome = await self._deliver(reply, parsed)
        data["sent_message_ids"] = list(outcome.sent_ids)
        data["stage_ms"]["total_local"] = round(
            (time.perf_counter() - prepared.started) * 1000 - result.latency_ms, 3
        )
        if svar_ops:  # only a completely delivered answer changes session variables
            data["svars"] = (
                await self.pipeline_state.commit_svars(turn, config, svar_ops, prepared.turn_id)
                if outcome.outcome == "delivered" and self.pipeline_state is not None
                else {"reason": f"not_applied:{outcome.outcome}", "tags": len(svar_ops)}
            )
        await self._save_snapshot(turn, prepared, outcome.outcome)
        if outcome.outcome == "delivered":
            user_text = await self.merges.with_late_lines(turn, prepared.current_text)
            reply_text = joined_reply(parsed.bubbles)
            await self._append_session(turn, user_text, reply_text)
            self._after_turn(
                CompletedTurn(
                    turn, user_text, reply_text, outcome.sent_ids, prepared.turn_id, config
                )
            )
        return TurnOutcome(outcome.outcome, outcome.reason, outcome.sent_ids, prepared.turn_id)

    async def _deliver(self, reply: ReplyTurn, parsed: Any) -> TurnOutcome:
        turn, route, config, sender = reply.turn, reply.route, reply.config, reply.sender
        rt = self.runtime
        quote_id = None
        if route.outcome is RouteOutcome.QUOTE and route.decision is not None:
            quote_id = await self.routing.resolve_quote_target(
                turn.bot_id, turn.group_id, route.decision.reply_message_id, turn.user_id
            )
        sticker = await self.stickers.for_reply(
            turn.bot_id, turn.group_id, parsed.sticker, config.chat.allow_sticker, config.stickers
        )
        if not parsed.bubbles and sticker is None:
            return TurnOutcome("silent", "sticker_unavailable")
        plan = DeliveryPlan(
            bot_id=turn.bot_id,
            group_id=turn.group_id,
            bubbles=parsed.bubbles,
            quote_message_id=quote_id,
            at_user_id=turn.user_id if config.chat.at_sender_on_first_bubble else None,
            sticker=sticker.segment if sticker is not None else None,
        )
        delivery = await deliver(plan, sender, rt.state, rng=self.rng, sleep=self.sleep)
        if sticker is not None and delivery.complete and delivery.sent_ids:
            await self.stickers.remember_sent(sticker, delivery.sent_ids[-1])
        if delivery.sent_ids:
            await self.routing.record_bot_reply(
                turn.bot_id,
                turn.group_id,
                turn.user_id,
                delivery.sent_ids,
                rt.clock.now(),
                config=config.routing,
            )
        outcome = "delivered" if delivery.complete else "partial"
        return TurnOutcome(outcome, delivery.reason, delivery.sent_ids)

    # -- helpers ---------------------------------------------------------------------------------
    async def _append_session(self, turn: TurnInput, user_text: str, reply_text: str) -> None:
        now = self.runtime.clock.now()
        base = {"bot_id": turn.bot_id, "group_id": turn.group_id, "user_id": turn.user_id}
        self.runtime.repos.chat_sessions.append_later(  # write-behind, batched
            [
                SessionTurn(
                    **base,
                    role="user",
                    content=session_user_content(user_text, turn),  # images: [图片]:url=X
                    created_at=now,
                    extra={"message_id": turn.message_id},
                ),
                SessionTurn(**base, role="assistant", content=reply_text, created_at=now),
            ]
        )

    async def _save_snapshot(self, turn: TurnInput, prepared: PreparedTurn, outcome: str) -> None:
        snapshot = InjectionSnapshot(
            turn_id=prepared.turn_id,
            bot_id=turn.bot_id,
            group_id=turn.group_id,
            user_id=turn.user_id,
            message_id=turn.message_id,
            created_at=self.runtime.clock.now(),
            model=prepared.model,
            outcome=outcome,
            data=prepared.data,
        )
        self.runtime.repos.snapshots.save_later(snapshot)  # write-behind; readers flush first

    def _after_turn(self, completed: CompletedTurn) -> None:
        for hook in self.hooks:
            task = asyncio.create_task(_run_hook(hook, completed), name=f"after-turn:{hook.name}")
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    async def drain_background(self) -> None:
        """Wait for after-turn work (tests, shutdown)."""
        while self._background:
            await asyncio.gather(*list(self._background), return_exceptions=True)


async def _run_hook(hook: AfterTurnHook, completed: CompletedTurn) -> None:
    try:
        await hook.after_turn(completed)
    except Exception:
        log.exception(
            "after-turn hook %s failed (group %s, turn %s)",
            hook.name,
            completed.turn.group_id,
            completed.turn_id,
        )


def _gather_request(
    turn: TurnInput,
    route: RouteResult,
    config: GroupConfig,
    persona: PersonaPack,
    current_text: str,
    runtime: PallasRuntime,
) -> GatherRequest:
    decision = route.decision
    return GatherRequest(
        turn=turn,
        current_text=current_text,
        now=runtime.clock.now(),
        config=config,
        persona_name=persona.name,
        allow_persistent_memory=bool(decision and decision.allow_persistent_memory),
        short_social=bool(decision and not decision.allow_persistent_memory),
        addressed=route.trigger.addressed,
    )


def _stopwatch(stages: dict[str, float], name: str, since: float) -> float:
    now = time.perf_counter()
    stages[name] = round((now - since) * 1000, 3)
    return now
