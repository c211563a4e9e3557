"""The process-wide service container: settings, database, state, config stores.

Created once at start-up by the NoneBot edge (or directly by tests / the CLI) and handed to
the plugins; nothing in the core reaches for globals.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker

from pallas.core.clock import Clock, SystemClock
from pallas.core.config_files import GroupConfigStore
from pallas.core.db import migrate
from pallas.core.db.engine import create_engine, normalise_database_url, session_factory
from pallas.core.db.repositories.chat_sessions import ChatSessionRepository
from pallas.core.db.repositories.messages import MessageRepository
from pallas.core.db.repositories.snapshots import SnapshotRepository
from pallas.core.db.repositories.usage import UsageRepository
from pallas.core.db.writer import MessageWriter
from pallas.core.settings import PallasSettings
from pallas.core.state import MemoryStateStore, StateStore
from pallas.product.config import GroupConfig
from pallas.product.llm.persona.pack import PersonaStore
from pallas.product.llm.provider.client import LLMClient
from pallas.product.llm.routing.router import RoutingEngine

log = logging.getLogger("pallas")


@dataclass
class Repositories:
    messages: MessageRepository
    chat_sessions: ChatSessionRepository
    usage: UsageRepository
    snapshots: SnapshotRepository

    @classmethod
    def build(cls, sessions: async_sessionmaker) -> Repositories:
        return cls(
            messages=MessageRepository(sessions),
            chat_sessions=ChatSessionRepository(sessions),
            usage=UsageRepository(sessions),
            snapshots=SnapshotRepository(sessions),
        )


@dataclass
class PallasRuntime:
    settings: PallasSettings
    clock: Clock
    state: StateStore
    engine: AsyncEngine
    sessions: async_sessionmaker
    repos: Repositories
    writer: MessageWriter
    group_configs: GroupConfigStore[GroupConfig]
    personas: PersonaStore
    llm: LLMClient
    routing: RoutingEngine
    nicknames: tuple[str, ...] = ()
    superusers: frozenset[int] = field(default_factory=frozenset)

    @classmethod
    async def start(
        cls,
        settings: PallasSettings,
        *,
        clock: Clock | None = None,
        state: StateStore | None = None,
        nicknames: tuple[str, ...] = (),
        superusers: frozenset[int] = frozenset(),
        base_dir: Path | None = None,
    ) -> PallasRuntime:
        url = normalise_database_url(settings.database_url, base_dir=base_dir)
        await migrate.upgrade(url)
        engine = create_engine(url)
        sessions = session_factory(engine)
        clock = clock or SystemClock(settings.pallas_clock_offset_seconds)
        repos = Repositories.build(sessions)
        writer = MessageWriter(repos.messages)
        writer.start()
        state = state or MemoryStateStore(clock)
        runtime = cls(
            settings=settings,
            clock=clock,
            state=state,
            engine=engine,
            sessions=sessions,
            repos=repos,
            writer=writer,
            group_configs=GroupConfigStore(GroupConfig, settings.groups_dir),
            personas=PersonaStore(settings.personas_dir),
            llm=LLMClient(settings, repos.usage, clock),
            routing=RoutingEngine(state),
            nicknames=nicknames,
            superusers=superusers,
        )
        for name, problem in runtime.group_configs.errors().items():
            log.error("group config %s: %s", name, problem)
        if not settings.replies_enabled:
            log.warning(
                "OPENAI_API_KEY is not set: Pallas records and routes messages, "
                "but replies are disabled until a key is configured"
            )
        return runtime

    async def stop(self) -> None:
        await self.llm.close()
        await self.writer.close()
        await self.engine.dispose()
