"""Step 4, prepare: a REPLY turn built up to its model request.

    merge wait      only when the message looks unfinished (`routing.merge_wait`); the member's
                    quick follow-up lines are folded into the turn
    gather          the turn's rows from the warm caches ‖ retrieval (memory, knowledge,
                    learning, old topics …) ‖ the planned tool — one round of waits, not three
    inputs          rules, session variables, kb lookup, attachments, the reply shape, sticker
                    names → the processors' frozen input (`ChatTurnContext`)
    request         the context pipeline, its budget and formatter (`pallas.context.request`)

The injection snapshot of the turn is built lazily (`Deferred`): the orchestrator starts it
while the model's answer is awaited.
"""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from pallas.config import GroupConfig
from pallas.context.analyzer import build_snapshot
from pallas.context.context import (
    ChatContextBundle,
    ContextSource,
    GatherRequest,
    TurnAnticipator,
    assemble_direct_chat_context,
)
from pallas.context.pipeline_cache import ChatPipelines
from pallas.context.processor_inputs import ChatTurnContext
from pallas.context.snapshot import TurnSnapshot
from pallas.context.turn_rules import rules_for_turn
from pallas.core.clock import Clock
from pallas.core.db.message_cache import MessageCache
from pallas.core.db.repositories.messages import MessageRepository
from pallas.core.db.session_cache import SessionCache
from pallas.core.deferred import Deferred
from pallas.core.eager import eager_gather
from pallas.core.message_text import turn_display_text
from pallas.core.state import StateStore
from pallas.core.turn import TurnInput
from pallas.features.stickers import StickerService
from pallas.features.tools import ToolRegistry, ToolTurnContext, run_planned_tool
from pallas.providers.client import LLMClient
from pallas.providers.models import ModelProfile, profile_for
from pallas.routing.evaluate import RouteOutcome, RouteResult
from pallas.routing.freshness import STALE_REPLY_SHAPE
from pallas.routing.merge_wait import MergeWaitDecision
from pallas.routing.triggers import without_call
from pallas.turn.contracts import PreparedTurn, ReplyTurn
from pallas.turn.parts.accounts import no_other_bots
from pallas.turn.parts.chat_pipeline import assemble_chat_request, chat_pipelines
from pallas.turn.parts.extras import TurnExtras
from pallas.turn.parts.merges import TurnMerges
from pallas.turn.parts.prompt_inputs import TurnRows, build_chat_turn_context, fetch_turn_rows

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
class PrepareStep:
    llm: LLMClient  # the chat model's name
    clock: Clock
    state: StateStore
    merges: TurnMerges
    extras: TurnExtras  # session variables, kb placeholders, attachments
    stickers: StickerService  # the group's sticker names for the contract
    # the newest group lines and session windows, kept warm at ingest (no DB on the reply path)
    message_cache: MessageCache
    session_cache: SessionCache
    flush: Flush  # the group's pending ingest writes (before a tool counts stored rows)
    messages: MessageRepository  # tool activity ranking
    config_dir: Path  # regex / worldbook rule files
    rng: random.Random
    tools: ToolRegistry
    sources: Sequence[ContextSource[GroupConfig]] = ()
    # what the sources start when an addressed line is read, before its turn runs
    anticipators: Sequence[TurnAnticipator[GroupConfig]] = ()
    nicknames: tuple[str, ...] = ()  # the bot's first nickname names it in the prompt
    # the deployment's accounts in a group (`parts.accounts.DeploymentBots`): "别的牛" lines
    deployment_bots: Callable[[int], Collection[int]] = no_other_bots
    # the chat pipelines (built once per order / disabled setting) and the token counter of
    # the budget and the snapshot (exact counts from cached line counts)
    pipelines: ChatPipelines = field(default_factory=chat_pipelines)

    def anticipate(self, turn: TurnInput, config: GroupConfig, aliases: Iterable[str]) -> None:
        """An addressed line was just read: the sources start what they can ahead, with the
        question the turn will search with (the line without its call of `aliases`)."""
        question = without_call(turn_display_text(turn), aliases)
        for anticipator in self.anticipators:
            anticipator.anticipate(turn, question, config)

    async def run(self, reply: ReplyTurn) -> PreparedTurn:
        """Merge quick follow-ups, fetch rows, retrieve, run the tool, build the request."""
        stage_ms: dict[str, float] = {}
        started = time.perf_counter()
        got = await self._gather(reply, stage_ms, started)
        mark = time.perf_counter()
        model = reply.cost.model or self.llm.model_for("chat")
        profile = profile_for(reply.config.models, model)
        ctx = await self._inputs(reply, got, profile)
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

    async def reassemble(self, ctx: ChatTurnContext) -> Sequence[Mapping[str, Any]]:
        """The request again from a changed context (tool results added by the tool loop)."""
        request = await assemble_chat_request(ctx, self.pipelines.for_config(ctx.config))
        return request.messages

    async def _gather(
        self, reply: ReplyTurn, stage_ms: dict[str, float], started: float
    ) -> GatheredTurn:
        """The merge wait, then the turn's rows, retrieval and the planned tool side by side."""
        turn, route, config = reply.turn, reply.route, reply.config
        wait = await self.merges.wait_decision(
            turn, route.trigger.content_text, config.chat, self.clock.now()
        )
        if wait.waits:  # only when the message looks unfinished (merge_wait.py)
            await reply.turn_ctx.wait(wait.wait_s)
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

    async def _inputs(
        self, reply: ReplyTurn, got: GatheredTurn, profile: ModelProfile
    ) -> ChatTurnContext:
        """Freeze what was gathered into the processors' input (rules, the extras, the stale
        reply shape, the group's sticker names)."""
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
            other_bots=self.deployment_bots(turn.group_id),
            now=self.clock.now(),
            tool=got.tool,
            tool_turn=route.outcome is RouteOutcome.TOOL,
            rules=rules_for_turn(
                turn,
                config=config,
                persona=persona,
                timeline=got.rows.timeline[-route.trigger.timeline_width :]
                if route.trigger.timeline_width > 0
                else (),
                tool_results=got.tool.results,
                tool_rules=got.tool.rules,
                now=self.clock.now(),
                config_dir=self.config_dir,
            ),
        )
        ctx = await self.extras.enrich(
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


def _gather_request(reply: ReplyTurn, current_text: str, now: float) -> GatherRequest[GroupConfig]:
    route, decision = reply.route, reply.route.decision
    called = (route.trigger.alias,) if route.trigger.alias else ()  # the name routing matched
    return GatherRequest(
        turn=reply.turn,
        current_text=current_text,
        question=without_call(current_text, called),
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
