"""The composition root: `build_app` builds every long-lived service of the bot exactly once.

`PallasRuntime` (pallas/runtime.py) is the infrastructure — settings, database, repositories,
StateStore, clock, config stores, LLM client. `PallasApp` is the product built over it, one of
each: ONE `MemoryService` (its vector index is per instance), the learning source, the turn's
extras, stickers, cost guard, the addressing rules and the chat-turn service with its steps.
The NoneBot edge (`pallas.onebot.lifespan`) starts one app and builds the edge over it; tests
and the CLI call `start_app` / `build_app` directly.

    runtime ──► addressing (persona aliases + NICKNAME + extra_aliases)
            ├─► memory (one MemoryService) ─► memory sources, extraction hook, turn extras,
            │                                 member commands, admin commands, web console
            ├─► learning (context source + PASS phrase pool), feedback, group insight sweep
            ├─► stickers (+ the describe job), cost guard
            ├─► admin (AdminServices: `/pallas …`, the CLI, the web console's backend)
            └─► chat (ChatTurnService: pallas/turn) ─► route (RouteStep, as in replay) → admit
                  → prepare → call → answer → deliver → remember (snapshots, session,
                  after-turn hooks); merges, freshness, the warm caches and one Pause

Product code never imports `pallas.runtime`: each service takes only the stores it uses through
its constructor; the `*_for(runtime)` helpers (here and in `pallas.app_wiring`) are the one
place that picks them out (`python -m pallas.cli deps --check` enforces the layers).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pallas.app_model import SHUTDOWN_DRAIN_S, PallasApp, Part
from pallas.app_wiring import (
    admin_services_for,
    after_turn_hooks,
    context_sources,
    cost_guard_for,
    describer_for,
    extraction_hook_for,
    feedback_for,
    insight_for,
    memory_service_for,
    memory_sources_for,
    reminders_for,
    session_summary_hook_for,
    turn_extras_for,
    voice_service_for,
)
from pallas.config import GroupConfig, TurnConfigs
from pallas.context.context import ContextSource, TurnAnticipator
from pallas.core.clock import Clock
from pallas.core.db.message_cache import MessageCache
from pallas.core.db.session_cache import SessionCache
from pallas.core.group_preload import GroupPreload, YieldTo
from pallas.core.settings import PallasSettings
from pallas.core.state import StateStore
from pallas.core.turn import AfterTurnHook
from pallas.features.cost import CostGuard
from pallas.features.learning import (
    GroupLearningSource,
)
from pallas.features.memory import (
    MemoryService,
    readable_scopes,
)
from pallas.features.memory_prompt import QuestionAhead
from pallas.features.retention import RetentionJob
from pallas.features.session import (
    OldTopicsSource,
    SessionTopicRepository,
)
from pallas.features.stickers import StickerRepository, StickerService
from pallas.features.tools import McpHub, PendingCalls, default_registry, load_mcp
from pallas.features.voice import VoiceService
from pallas.features.worldbook import WorldbookLibrary
from pallas.routing.freshness import FreshnessGate
from pallas.routing.router import Router
from pallas.runtime import PallasRuntime
from pallas.turn import (
    Addressing,
    AnswerClaims,
    KnownStakes,
    ModelTools,
    QuotedMessageFetcher,
    TurnExtras,
    TurnMerges,
)
from pallas.turn.admit import AdmitStep
from pallas.turn.call import CallStep
from pallas.turn.context import Pause, Sleep
from pallas.turn.contracts import PhraseSource, StakeKeySource
from pallas.turn.deliver import DeliverStep
from pallas.turn.prepare import PrepareStep
from pallas.turn.remember import TurnRecorder
from pallas.turn.route import GroupConfigFor, PersonaFor, RouteStep
from pallas.turn.service import ChatTurnService

if TYPE_CHECKING:
    import httpx2


def chat_service_for(
    runtime: PallasRuntime,
    *,
    rng: random.Random,
    pause: Pause,
    addressing: Addressing,
    sources: Sequence[ContextSource[GroupConfig]],
    anticipators: Sequence[TurnAnticipator[GroupConfig]] = (),
    hooks: Sequence[AfterTurnHook],
    phrases: PhraseSource,
    turn_extras: TurnExtras,
    cost: CostGuard,
    stickers: StickerService,
    fetch_quoted: QuotedMessageFetcher | None = None,
    stake_keys: StakeKeySource | None = None,
    known_stakes: KnownStakes | None = None,
    mcp: McpHub | None = None,
    voice: VoiceService | None = None,
) -> ChatTurnService:
    """The chat turn over its parts, one of each: merges, the freshness gate, the route step,
    the warm caches fed at ingest (the runtime's `IngestEvents`), the reply step
    (`fetch_quoted`: the OneBot get_msg for quoted images the message store lacks; `mcp`:
    the MCP servers of `config/mcp.toml`, read here when not given)."""
    if mcp is None:
        mcp = McpHub(load_mcp(runtime.settings.pallas_config_dir))
    state, clock, routing = runtime.state, runtime.clock, runtime.routing
    merges = TurnMerges(state)
    freshness = FreshnessGate(state, routing, sleep=pause)
    tools = default_registry()
    route_step = RouteStep(
        clock=clock,
        routing=routing,
        group_config=TurnConfigs(runtime.group_configs.get),
        persona=runtime.personas.get,
        addressing=addressing,
        merges=merges,
        freshness=freshness,
        tools=tools,
        rng=rng,
        superusers=runtime.superusers,
        phrases=phrases,
        stake_keys=stake_keys,
        known_stakes=known_stakes,
    )
    deployment_bots = DeploymentBots(runtime)
    message_cache = MessageCache(
        runtime.repos.messages,
        flush=runtime.writer.flush,
        unstored=runtime.writer.unstored,
        events=runtime.ingest,  # fed at ingest: every submit, every batch stored
    )
    return ChatTurnService(
        route_step=route_step,
        admit=AdmitStep(
            routing=routing,
            freshness=freshness,
            cost=cost,
            state=state,
            clock=clock,
            superusers=runtime.superusers,
        ),
        prepare=PrepareStep(
            llm=runtime.llm,
            clock=clock,
            state=state,
            merges=merges,
            extras=turn_extras,
            stickers=stickers,
            message_cache=message_cache,
            session_cache=SessionCache.of(runtime.repos.chat_sessions),
            flush=runtime.writer.flush,
            messages=runtime.repos.messages,
            config_dir=runtime.settings.pallas_config_dir,
            rng=rng,
            tools=tools,
            sources=sources,
            anticipators=anticipators,
            nicknames=runtime.nicknames,
            deployment_bots=deployment_bots,
        ),
        call=CallStep(
            llm=runtime.llm,
            clock=clock,
            cost=cost,
            messages=runtime.repos.messages,
            fetch_quoted_message=fetch_quoted,
        ),
        deliver=DeliverStep(
            routing=routing, stickers=stickers, state=state, clock=clock, rng=rng, voice=voice
        ),
        tools=ModelTools(
            hub=mcp,  # its servers are started on first use
            state=state,
            pending=PendingCalls(state),
            clock=clock,
            routing=routing,
            usage=runtime.repos.usage,
            superusers=runtime.superusers,
            local=tools,  # calc, dice, … offered where `[tools.mcp]` allows "local"
            rng=rng,
            activity=runtime.repos.messages,
        ),
        recorder=TurnRecorder(
            clock, runtime.repos.snapshots, runtime.repos.chat_sessions, hooks=hooks
        ),
        routing=routing,
        merges=merges,
        extras=turn_extras,
        state=state,
        clock=clock,
        pause=pause,
        accounts=AnswerClaims(state, deployment_bots),
    )


class DeploymentBots:
    """The deployment's accounts as a group sees them: the accounts connected to this process
    or announced by the other processes on the shared state store (filled automatically) and
    the group's `other_bot_ids` (other bots the operator names)."""

    def __init__(self, runtime: PallasRuntime) -> None:
        self._runtime = runtime

    def __call__(self, group_id: int) -> frozenset[int]:
        configured = self._runtime.group_configs.get(group_id).other_bot_ids
        ours = self._runtime.deployment_ids()  # connected here, or announced by other processes
        return ours.union(configured) if configured else ours


def group_preload_for(
    runtime: PallasRuntime,
    chat: ChatTurnService,
    learning: GroupLearningSource,
    memory: MemoryService,
    old_topics: OldTopicsSource,
    yield_to: YieldTo | None = None,
) -> GroupPreload[GroupConfig]:
    """The group-level entries of the reply path, loaded when a group is seen (same caches)."""
    prepare = chat.prepare

    async def usage_today(bot_id: int, group_id: int, config: GroupConfig, now: float) -> None:
        await chat.cost.counters.seed_today(now, group_id)

    async def timeline(bot_id: int, group_id: int, config: GroupConfig, now: float) -> None:
        await prepare.message_cache.recent(bot_id, group_id, limit=1)

    async def sessions(bot_id: int, group_id: int, config: GroupConfig, now: float) -> None:
        await prepare.session_cache.prewarm(bot_id, group_id)

    async def shared_memory(bot_id: int, group_id: int, config: GroupConfig, now: float) -> None:
        scopes = readable_scopes(bot_id, group_id, config.memory.shared_pools)
        await memory.prewarm(scopes, config.memory)

    return GroupPreload(
        (timeline, sessions, learning.prewarm, shared_memory, old_topics.prewarm, usage_today),
        clock=runtime.clock,
        group_config=runtime.group_configs.get,
        yield_to=yield_to,
        events=runtime.ingest,  # a group's entries load when it is seen
    )


def build_app(
    runtime: PallasRuntime,
    *,
    rng: random.Random | None = None,
    sleep: Sleep = asyncio.sleep,
    fetch_quoted: QuotedMessageFetcher | None = None,
    preload_yield: YieldTo | None = None,
) -> PallasApp:
    """Every product service over `runtime`, once (`sleep`: how the chat turn waits — tests
    pass one that advances a fake clock; `fetch_quoted`: the NoneBot edge's get_msg;
    `preload_yield`: what a group preload awaits before each load — the edge's lanes make it
    wait while an addressed turn prepares)."""
    rng = rng or random.Random()
    addressing = Addressing(nicknames=runtime.nicknames)
    memory = memory_service_for(runtime)
    worldbooks = WorldbookLibrary(runtime.settings.worldbooks_dir)  # one, kept loaded
    # the group's learning: context blocks, and the PASS phrase pool
    learning = GroupLearningSource(runtime.sessions, runtime.state)
    turn_extras = turn_extras_for(runtime, memory)
    stickers = StickerService(
        StickerRepository(runtime.sessions), runtime.state, runtime.clock, runtime.group_configs.get
    )
    cost = cost_guard_for(runtime, rng)
    mcp = McpHub(load_mcp(runtime.settings.pallas_config_dir))  # chat turns and /pallas tool
    old_topics = OldTopicsSource(
        topics=SessionTopicRepository(runtime.sessions), chat_sessions=runtime.repos.chat_sessions
    )
    voice = voice_service_for(runtime)
    known_stakes = KnownStakes(memory.repo, old_topics.topics, runtime.clock)
    chat = chat_service_for(
        runtime,
        rng=rng,
        pause=Pause(sleep),
        addressing=addressing,
        sources=context_sources(
            learning, memory_sources_for(runtime, memory, worldbooks=worldbooks), old_topics
        ),
        anticipators=(QuestionAhead(memory),),  # an addressed line's question, encoded ahead
        hooks=after_turn_hooks(
            # one topics repository: archived topics reach the old-topics source's kept rows
            session_summary_hook_for(runtime, old_topics.topics),
            extraction_hook_for(runtime, memory),
        ),
        phrases=learning,
        turn_extras=turn_extras,  # svars, kb placeholders, attachments
        cost=cost,
        stickers=stickers,
        fetch_quoted=fetch_quoted,
        stake_keys=worldbooks,  # the same books: naming the persona's world is a stake
        known_stakes=known_stakes,
        mcp=mcp,
        voice=voice,
    )
    preload = group_preload_for(runtime, chat, learning, memory, old_topics, preload_yield)
    feedback, insight, describer = (
        feedback_for(runtime),
        insight_for(runtime),
        describer_for(runtime),
    )
    admin = admin_services_for(
        runtime,
        memory=memory,
        feedback=feedback,
        insight=insight,
        describer=describer,
        mcp=mcp,
    )
    return PallasApp(
        runtime=runtime,
        addressing=addressing,
        memory=memory,
        learning=learning,
        turn_extras=turn_extras,
        stickers=stickers,
        cost=cost,
        chat=chat,
        feedback=feedback,
        insight=insight,
        describer=describer,
        admin=admin,
        preload=preload,
        topics=old_topics.topics,
        retention=RetentionJob(
            runtime.sessions,
            runtime.clock,
            scopes=runtime.repos.messages.groups,
            config_of=lambda group_id: runtime.group_configs.get(group_id).retention,
        ),
        reminders=reminders_for(runtime),
        voice=voice,
        parts=lifespan_parts(
            runtime,
            voice=voice,
            topics=old_topics.topics,
            mcp=mcp,
            memory=memory,
            chat=chat,
            known_stakes=known_stakes,
            preload=preload,
            cost=cost,
        ),
    )


async def _nothing() -> None:
    return None


def lifespan_parts(
    runtime: PallasRuntime,
    *,
    voice: VoiceService,
    topics: SessionTopicRepository,
    mcp: McpHub,
    memory: MemoryService,
    chat: ChatTurnService,
    known_stakes: KnownStakes,
    preload: GroupPreload[GroupConfig],
    cost: CostGuard,
) -> list[Part]:
    """The app's parts in start order; `PallasApp.stop` stops them in reverse: the group
    preload and the known-stakes index, the chat's after-turn work (which writes memory), the
    memory's background work within the deadline (expansion, consolidation, embedding
    backfill, touches), the MCP servers, the topics written behind, the speech client, and
    last the runtime (LLM client, writer, database)."""

    async def drain_memory() -> None:
        await memory.drain(within_s=SHUTDOWN_DRAIN_S)

    async def announce_accounts() -> None:
        if runtime.deployment_accounts is not None:
            runtime.deployment_accounts.start()  # announce ours, learn other processes'

    async def seed_cost_counters() -> None:
        # one grouped ledger query now instead of one per group's first @ of the day
        await cost.counters.seed_every_group(runtime.clock.now())

    return [
        Part("runtime", runtime.stop, start=announce_accounts),
        Part("cost counters", _nothing, start=seed_cost_counters),
        Part("speech", voice.speech.close),
        Part("session topics", topics.flush),
        Part("MCP servers", mcp.close),
        Part("memory background work", drain_memory),
        Part("chat after-turn work", chat.drain_background),
        Part("known stakes", known_stakes.close),
        Part("group preload", preload.close),
    ]


def build_replay_route_step(
    clock: Clock,
    state: StateStore,
    *,
    group_config: GroupConfigFor,
    persona: PersonaFor,
    rng: random.Random,
    nicknames: tuple[str, ...] = (),
    stake_keys: StakeKeySource | None = None,
) -> RouteStep:
    """The live route step over a replay's fake clock and memory store (`pallas replay`):
    no database, so no group expressions; superusers are unknown to a replay."""
    routing = Router(state)

    async def no_wait(_seconds: float) -> None:  # a replay's clock follows the events
        return None

    return RouteStep(
        clock=clock,
        routing=routing,
        group_config=group_config,
        persona=persona,
        addressing=Addressing(nicknames=nicknames),
        merges=TurnMerges(state),
        freshness=FreshnessGate(state, routing, sleep=no_wait),
        tools=default_registry(),
        rng=rng,
        stake_keys=stake_keys,
    )


async def start_app(
    settings: PallasSettings,
    *,
    clock: Clock | None = None,
    state: StateStore | None = None,
    nicknames: tuple[str, ...] = (),
    superusers: frozenset[int] = frozenset(),
    base_dir: Path | None = None,
    rng: random.Random | None = None,
    sleep: Sleep = asyncio.sleep,
    fetch_quoted: QuotedMessageFetcher | None = None,
    preload_yield: YieldTo | None = None,
    llm_http_client: httpx2.AsyncClient | None = None,
) -> PallasApp:
    """Start the runtime (migrations, database, state) and build the app over it
    (`llm_http_client`: see `PallasRuntime.start`)."""
    runtime = await PallasRuntime.start(
        settings,
        clock=clock,
        state=state,
        nicknames=nicknames,
        superusers=superusers,
        base_dir=base_dir,
        llm_http_client=llm_http_client,
    )
    app = build_app(
        runtime, rng=rng, sleep=sleep, fetch_quoted=fetch_quoted, preload_yield=preload_yield
    )
    await app.start()  # its parts, in order (`lifespan_parts`)
    return app


__all__ = [
    "PallasApp",
    "admin_services_for",
    "build_app",
    "build_replay_route_step",
    "chat_service_for",
    "extraction_hook_for",
    "memory_service_for",
    "memory_sources_for",
    "start_app",
]
