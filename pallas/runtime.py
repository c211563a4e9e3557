"""The process-wide service container: settings, database, state, config stores.

Created once at start-up by the NoneBot edge (or directly by tests / the CLI) and handed to
the plugins; nothing in the core reaches for globals.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from pallas.config import GroupConfig
from pallas.core.accounts import Accounts, DeploymentAccounts
from pallas.core.clock import Clock, SystemClock
from pallas.core.config_files import GroupConfigStore
from pallas.core.db import migrate
from pallas.core.db.durable_writer import ThreadedMessageWriter, build_message_writer
from pallas.core.db.engine import create_engine, normalise_database_url, session_factory
from pallas.core.db.ingest_events import IngestEvents
from pallas.core.db.repositories.chat_sessions import ChatSessionRepository
from pallas.core.db.repositories.messages import MessageRepository
from pallas.core.db.repositories.routes import RouteHistoryRepository
from pallas.core.db.repositories.snapshots import SnapshotRepository
from pallas.core.db.repositories.usage import UsageRepository
from pallas.core.db.writer import MessageWriter
from pallas.core.settings import PallasSettings
from pallas.core.state import StateStore
from pallas.core.state_redis import close_state_store, open_state_store
from pallas.features.persona import PersonaStore
from pallas.providers.client import LLMClient
from pallas.providers.encoder_slot import EncoderSlot
from pallas.providers.live import LiveEndpoints
from pallas.routing.router import Router

if TYPE_CHECKING:
    import httpx2

log = logging.getLogger("pallas")


@dataclass
class Repositories:
    messages: MessageRepository
    chat_sessions: ChatSessionRepository
    usage: UsageRepository
    snapshots: SnapshotRepository
    routes: RouteHistoryRepository

    @classmethod
    def build(
        cls, sessions: async_sessionmaker[AsyncSession], *, events: IngestEvents | None = None
    ) -> Repositories:
        """`events`: told of every batch stored through the message repository."""
        return cls(
            messages=MessageRepository(sessions, events=events),
            chat_sessions=ChatSessionRepository(sessions),
            usage=UsageRepository(sessions),
            snapshots=SnapshotRepository(sessions),
            routes=RouteHistoryRepository(sessions),
        )

    async def flush(self) -> None:
        """Store the write-behind rows (snapshots, session turns, usage, routing decisions)
        queued so far."""
        for repo in (self.snapshots, self.chat_sessions, self.usage, self.routes):
            await repo.flush()


@dataclass
class PallasRuntime:
    settings: PallasSettings
    clock: Clock
    state: StateStore
    engine: AsyncEngine
    sessions: async_sessionmaker[AsyncSession]
    repos: Repositories
    writer: MessageWriter | ThreadedMessageWriter
    group_configs: GroupConfigStore[GroupConfig]
    personas: PersonaStore
    llm: LLMClient
    routing: Router
    nicknames: tuple[str, ...] = ()
    superusers: frozenset[int] = field(default_factory=frozenset)
    owns_state: bool = False  # the runtime opened the store (and closes it on stop)
    accounts: Accounts = field(default_factory=Accounts)  # the QQ accounts connected (the edge)
    # every account of the deployment, other processes' too (announced in the state store)
    deployment_accounts: DeploymentAccounts | None = None
    started_at: float = 0.0  # unix seconds (the clock's) when the runtime started
    # memory's offline sentence encoder: "loading" until the edge loads it once the bot is up
    # (`EncoderSlot.load`: its own process, about a second); tests and the CLI never load it
    encoder: EncoderSlot = field(default_factory=EncoderSlot)
    # every message handed to the writer or stored through `repos.messages`, told to the warm
    # state kept over them (the message cache, the group warm-up: they subscribe when built)
    ingest: IngestEvents = field(default_factory=IngestEvents)

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
        llm_http_client: httpx2.AsyncClient | None = None,
    ) -> PallasRuntime:
        """`llm_http_client`: the model client's transport (`LLMClient`'s `http_client`); tests
        hand one that reaches an in-process fake model, production leaves it to the SDK."""
        clock = clock or SystemClock(settings.pallas_clock_offset_seconds)
        owns_state = state is None
        if state is None:
            # first: a configured but unreachable Redis stops start-up before anything runs
            state = await open_state_store(
                settings.pallas_state_url, settings.pallas_state_prefix, clock=clock
            )
        url = normalise_database_url(settings.database_url, base_dir=base_dir)
        if settings.pallas_state_url.strip() and url.startswith("sqlite"):
            log.warning(
                "PALLAS_STATE_URL shares state between processes, but DATABASE_URL is SQLite: "
                "SQLite serves one process; run several on PostgreSQL (docs/scaling.md)"
            )
        try:
            await migrate.upgrade(url)
        except BaseException:
            if owns_state:
                await close_state_store(state)
            raise
        engine = create_engine(url)
        sessions = session_factory(engine)
        ingest = IngestEvents()  # first: the writer and the repository tell it
        repos = Repositories.build(sessions, events=ingest)
        # own thread: a busy loop can't starve it
        writer = build_message_writer(url, repos.messages, events=ingest)
        writer.start()
        group_configs = GroupConfigStore(GroupConfig, settings.groups_dir)
        # the model endpoints in force: the environment over the console's secrets file,
        # swapped whole when the operator saves a model (`providers/live.py`)
        endpoints = LiveEndpoints(
            settings, data_dir=settings.pallas_data_dir, config_dir=settings.pallas_config_dir
        )
        runtime = cls(
            settings=settings,
            clock=clock,
            state=state,
            engine=engine,
            sessions=sessions,
            repos=repos,
            writer=writer,
            group_configs=group_configs,
            personas=PersonaStore(settings.personas_dir),
            llm=LLMClient(
                settings,
                repos.usage,
                clock,
                http_client=llm_http_client,
                state=state,
                group_profiles=lambda group_id: group_configs.get(group_id).models,
                endpoints=endpoints,
            ),
            routing=Router(state, history=repos.routes),
            nicknames=nicknames,
            superusers=superusers,
            owns_state=owns_state,
            accounts=(accounts := Accounts(clock.now)),
            deployment_accounts=DeploymentAccounts(accounts, state, clock.now),
            started_at=clock.now(),
            encoder=EncoderSlot(
                settings.pallas_sentence_encoder, table_dir=settings.pallas_data_dir / "cache"
            ),
            ingest=ingest,
        )
        for name, problem in runtime.group_configs.errors().items():
            log.error("group config %s: %s", name, problem)
        if not runtime.llm.enabled:
            log.warning(
                "OPENAI_API_KEY is not set: Pallas records and routes messages, "
                "but replies are disabled until a key is configured (the console's 模型 page)"
            )
        return runtime

    def deployment_ids(self) -> frozenset[int]:
        """The deployment's accounts (this process's connected ones and the others')."""
        if self.deployment_accounts is None:
            return self.accounts.connected_ids()
        return self.deployment_accounts.ids()

    async def stop(self) -> None:
        if self.deployment_accounts is not None:
            await self.deployment_accounts.close()
        await self.llm.close()
        await self.encoder.aclose()
        await self.writer.close()
        await self.repos.flush()
        await self.engine.dispose()
        if self.owns_state:
            await close_state_store(self.state)
