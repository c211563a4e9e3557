"""The composition root: `build_app` builds every long-lived service of the bot exactly once.

`PallasRuntime` (pallas/runtime.py) is the infrastructure — settings, database, repositories,
StateStore, clock, config stores, LLM client. `PallasApp` is the product built over it, one of
each: ONE `MemoryService` (its vector index is per instance), the learning source, pipeline
state, stickers, cost guard, the addressing rules, the route step and the chat-turn service.
The NoneBot edge (`pallas.onebot.lifecycle`) holds one app and hands it to plugins through
NoneBot's dependency injection; tests and the CLI call `start_app` / `build_app` directly.

    runtime ──► addressing (persona aliases + NICKNAME + extra_aliases)
            ├─► memory (one MemoryService) ─► memory sources, extraction hook, pipeline state,
            │                                 member commands, admin commands, web console
            ├─► learning (context source + PASS phrase pool)
            ├─► stickers, cost guard
            └─► chat (ChatTurnService) ─► router (TurnRouter: the route step, as in replay)
"""

from __future__ import annotations

import random
from pathlib import Path

from pallas.core.clock import Clock
from pallas.core.db.repositories.stickers import StickerRepository
from pallas.core.settings import PallasSettings
from pallas.core.state import StateStore
from pallas.product.llm.addressing import Addressing
from pallas.product.llm.chat_turn import ChatTurnService
from pallas.product.llm.cost.guard import CostGuard
from pallas.product.llm.cost.turn_exit import guard_for
from pallas.product.llm.freshness import FreshnessGate
from pallas.product.llm.learning.context_source import GroupLearningSource
from pallas.product.llm.memory.factory import build_memory_service
from pallas.product.llm.memory.service import MemoryService
from pallas.product.llm.merges import TurnMerges
from pallas.product.llm.pipeline_state import PipelineState, build_pipeline_state
from pallas.product.llm.routing.router import RoutingEngine
from pallas.product.llm.stickers.service import StickerService
from pallas.product.llm.tools.registry import default_registry
from pallas.product.llm.turn_route import GroupConfigFor, PersonaFor, TurnRouter
from pallas.product.llm.wiring import after_turn_hooks, context_sources
from pallas.runtime import PallasRuntime


class PallasApp:
    """The bot's services, one of each (a plain class, not a dataclass: NoneBot's dependency
    injection type-checks a parameter with pydantic, which would try to model a dataclass's
    fields; a plain class is checked with isinstance)."""

    def __init__(
        self,
        *,
        runtime: PallasRuntime,
        addressing: Addressing,
        memory: MemoryService,
        learning: GroupLearningSource,
        pipeline_state: PipelineState,
        stickers: StickerService,
        cost: CostGuard,
        chat: ChatTurnService,
    ) -> None:
        self.runtime = runtime
        self.addressing = addressing
        self.memory = memory
        self.learning = learning
        self.pipeline_state = pipeline_state
        self.stickers = stickers
        self.cost = cost
        self.chat = chat

    @property
    def router(self) -> TurnRouter:
        return self.chat.router

    async def stop(self) -> None:
        """Finish after-turn work, then close the runtime (LLM client, writer, database)."""
        await self.chat.drain_background()
        await self.runtime.stop()


def build_app(runtime: PallasRuntime, *, rng: random.Random | None = None) -> PallasApp:
    """Every product service over `runtime`, once."""
    rng = rng or random.Random()
    addressing = Addressing(nicknames=runtime.nicknames)
    memory = build_memory_service(runtime)
    # the group's learning: context blocks, and the PASS phrase pool
    learning = GroupLearningSource(runtime.sessions, runtime.state)
    pipeline_state = build_pipeline_state(runtime, memory=memory)
    stickers = StickerService(
        StickerRepository(runtime.sessions), runtime.state, runtime.clock, runtime.group_configs.get
    )
    cost = guard_for(runtime, rng=rng)
    chat = ChatTurnService(
        runtime=runtime,
        routing=runtime.routing,
        rng=rng,
        sources=context_sources(runtime, learning, memory=memory),
        hooks=after_turn_hooks(runtime, memory=memory),
        phrases=learning,
        pipeline_state=pipeline_state,  # svars, kb placeholders, attachments
        cost=cost,
        addressing=addressing,
        stickers=stickers,
    )
    return PallasApp(
        runtime=runtime,
        addressing=addressing,
        memory=memory,
        learning=learning,
        pipeline_state=pipeline_state,
        stickers=stickers,
        cost=cost,
        chat=chat,
    )


def build_replay_router(
    clock: Clock,
    state: StateStore,
    *,
    group_config: GroupConfigFor,
    persona: PersonaFor,
    rng: random.Random,
    nicknames: tuple[str, ...] = (),
) -> TurnRouter:
    """The live route step over a replay's fake clock and memory store (`pallas replay`):
    no database, so no group expressions; superusers are unknown to a replay."""
    routing = RoutingEngine(state)

    async def no_wait(_seconds: float) -> None:  # a replay's clock follows the events
        return None

    return TurnRouter(
        clock=clock,
        routing=routing,
        group_config=group_config,
        persona=persona,
        addressing=Addressing(nicknames=nicknames),
        merges=TurnMerges(state),
        freshness=FreshnessGate(state, routing, sleep=no_wait),
        tools=default_registry(),
        rng=rng,
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
) -> PallasApp:
    """Start the runtime (migrations, database, state) and build the app over it."""
    runtime = await PallasRuntime.start(
        settings,
        clock=clock,
        state=state,
        nicknames=nicknames,
        superusers=superusers,
        base_dir=base_dir,
    )
    return build_app(runtime, rng=rng)


__all__ = ["PallasApp", "build_app", "build_replay_router", "start_app"]
