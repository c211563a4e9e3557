"""The one object the console takes from the running bot (`ConsoleBackend`).

Everything the web pages read or change goes through here, so the pages do not depend on how
the bot is put together; the composition root (`pallas.app.console_backend`) builds it from the
app's services.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from pallas.admin import AdminContext, AdminServices, memory_command
from pallas.config import GroupConfig
from pallas.core.accounts import Account, Accounts
from pallas.core.clock import Clock
from pallas.core.config_files import GroupConfigStore
from pallas.core.db.repositories.messages import MessageRepository
from pallas.core.db.repositories.routes import RouteHistoryRepository, RouteRecord
from pallas.core.db.repositories.snapshots import SnapshotRepository
from pallas.core.db.repositories.usage import UsageTotals
from pallas.core.db.retention import database_facts
from pallas.core.db.schema_state import SchemaState, schema_state
from pallas.core.state import StateStore
from pallas.core.version import pallas_version
from pallas.features.memory import MemoryItem, Retired, readable_scopes, retired_items
from pallas.features.reminders import ReminderRepository
from pallas.features.tools import ServerStatus
from pallas.features.voice import VoiceService
from pallas.providers.client import EndpointStatus
from pallas.providers.embedding_probe import probe_embeddings
from pallas.providers.live import LiveEndpoints
from pallas.routing.router import Router
from pallas.turn import build_chat_pipeline
from pallas.web.config_edit import ConfigRejected, read_text, validate_text
from pallas.web.queries import ConsoleQueries, day_start

log = logging.getLogger("pallas.console")


GroupNamesSource = Callable[[], Awaitable[dict[int, str]]]


class ConsoleBackend:
    """A thin adapter over the app's services for the console pages."""

    def __init__(
        self,
        admin: AdminServices,
        queries: ConsoleQueries,
        *,
        group_names: GroupNamesSource | None = None,
        routes: RouteHistoryRepository | None = None,
        accounts: Accounts | None = None,
        started_at: float = 0.0,
        mcp_statuses: Callable[[], list[ServerStatus]] | None = None,
        voice: VoiceService | None = None,
    ):
        self._admin = admin
        self._deployment = admin.deployment
        self._clock: Clock = admin.clock
        self._snapshots: SnapshotRepository = admin.snapshots
        self._routing: Router = admin.routing
        self._memory = admin.memory  # the app's one memory service
        self._group_names = group_names
        self._routes = routes
        self._mcp_statuses = mcp_statuses
        self._accounts = accounts
        self.started_at = started_at  # when the bot's runtime started (the status page)
        self._probes: set[asyncio.Task[None]] = set()  # embedding probes after a model save
        self.queries = queries
        self.voice = voice  # the persona's voice: the 语音 page's chain and 试听

    def mcp_servers(self) -> list[ServerStatus]:
        """The MCP servers of `config/mcp.toml` as the chat turns see them (not started here:
        a server starts on a turn's first use)."""
        return self._mcp_statuses() if self._mcp_statuses is not None else []

    async def group_names(self) -> dict[int, str]:
        """Group names from the connected accounts ({} when none can tell)."""
        if self._group_names is None:
            return {}
        try:
            return await self._group_names()
        except Exception:
            log.exception("console: group names unavailable")
            return {}

    # --- plain values -------------------------------------------------------------------
    def now(self) -> float:
        return self._clock.now()

    @property
    def reminders(self) -> ReminderRepository | None:
        """Members' reminders (the 提醒 page); None when the app has none."""
        return self._admin.reminders

    @property
    def state(self) -> StateStore:
        return self._admin.state

    @property
    def data_dir(self) -> Path:
        return self._deployment.data_dir

    @property
    def groups_dir(self) -> Path:
        return self._deployment.groups_dir

    @property
    def configs(self) -> GroupConfigStore[GroupConfig]:
        return self._admin.configs

    @property
    def messages(self) -> MessageRepository:
        return self._admin.messages

    @property
    def personas_dir(self) -> Path:
        return self.groups_dir.parent / "personas"

    @property
    def worldbooks_dir(self) -> Path:
        return self.groups_dir.parent / "worldbooks"

    async def database_line(self) -> str:
        """`数据库 12.3 MB，最早保留的消息 2025-06-01` ("" when it cannot be read)."""
        try:
            return (await database_facts(self._admin.sessions)).line_zh()
        except Exception:
            log.exception("console: database facts unavailable")
            return ""

    async def schema_state(self) -> SchemaState | None:
        """The database's schema against this release's migrations (None when unreadable)."""
        try:
            return await schema_state(self._admin.sessions)
        except Exception:
            log.exception("console: schema state unavailable")
            return None

    async def version(self) -> str:
        """This process's version (git is asked once, in a worker thread)."""
        return await asyncio.to_thread(pallas_version)

    async def endpoint_status(self) -> list[EndpointStatus]:
        """Each task's endpoint chain with its breaker state ([] when it cannot be read)."""
        try:
            return await self._admin.llm.endpoint_status()
        except Exception:
            log.exception("console: endpoint status unavailable")
            return []

    def embedding_line(self) -> str:
        """`向量检索：开启（bge-m3，…）` / `…关闭（why）`: what the start-up probe decided."""
        return self._admin.llm.embeddings.state.status_zh()

    def model_names(self) -> dict[str, str]:
        """The model each task uses ("" = the task is off); names only, never a key."""
        llm = self._admin.llm  # the models in force (a model saved in the console counts)
        return {
            "chat": llm.model_for("chat"),
            "cheap": llm.model_for("cheap"),
            "vision": llm.model_for("vision"),
            "embedding": llm.model_for("embedding"),  # "" while off or probing
            "transcribe": self._deployment.transcribe_model,
        }

    @property
    def replies_enabled(self) -> bool:
        """Whether the model client has a key in force now (a key saved in the console counts
        at once)."""
        return self._admin.llm.enabled

    @property
    def superusers(self) -> frozenset[int]:
        return self._deployment.superusers

    @property
    def endpoints(self) -> LiveEndpoints:
        """The holder of the model endpoints in force (the 模型 page reads and saves it)."""
        return self._admin.llm.endpoints

    def reprobe_embeddings(self) -> None:
        """Probe the embeddings of a newly saved model in the background (as at start-up)."""

        async def probe() -> None:
            try:
                await probe_embeddings(self._admin.llm)
            except Exception:
                log.exception("console: the embedding probe of the saved model failed")

        task = asyncio.create_task(probe())
        self._probes.add(task)
        task.add_done_callback(self._probes.discard)

    def daily_caps(self) -> tuple[int, int]:
        """The deployment's daily reply caps (calls, tokens) over every group; 0 = none."""
        return self._deployment.daily_call_cap, self._deployment.daily_token_cap

    def group_config(self, group_id: int) -> GroupConfig:
        return self._admin.group_config(group_id)

    def fresh_config(self, group_id: int) -> GroupConfig:
        """The merged config as the files are now (the store re-reads at most once a second);
        the store's last good version when the file on disk does not validate."""
        try:
            text = read_text(self.groups_dir, group_id)
            return validate_text(self.groups_dir, group_id, text)
        except (ConfigRejected, OSError):
            return self.group_config(group_id)

    def pipeline_processors(self, group_id: int) -> list[dict[str, Any]]:
        """The group's pipeline as rows, read from the live processor registry."""
        pipeline = build_chat_pipeline(self.fresh_config(group_id).context)
        return [
            {
                "id": step.processor.id,
                "priority": step.processor.priority,
                "core": bool(step.processor.core),
                "fixed": bool(step.processor.fixed),
                "enabled": step.enabled,
            }
            for step in pipeline.plan
        ]

    def default_order(self) -> list[str]:
        return list(build_chat_pipeline().reset().order)

    # --- stored data --------------------------------------------------------------------
    async def bot_for_group(self, group_id: int) -> int | None:
        for bot_id, gid in await self.queries.scopes_seen():
            if gid == group_id:
                return bot_id
        return None

    async def snapshot(self, turn_id: str) -> dict[str, Any] | None:
        snap = await self._snapshots.by_turn(turn_id)
        return asdict(snap) if snap is not None else None

    async def decisions(
        self, bot_id: int, group_id: int, *, outcome: str | None = None, limit: int = 100
    ) -> list[dict[str, Any]]:
        """The group's latest routing records, oldest first (from the routing history: they
        outlive a restart)."""
        return await self._routing.recent_decisions(
            bot_id, group_id, outcome=outcome or None, limit=limit
        )

    async def failures(
        self, *, group_id: int | None = None, before_id: int | None = None, limit: int = 50
    ) -> list[RouteRecord]:
        """Failed turns, newest first ([] without a routing history)."""
        if self._routes is None:
            return []
        return await self._routes.failures(group_id=group_id, before_id=before_id, limit=limit)

    async def failure_counts(self, now: float) -> dict[tuple[int, int], int]:
        """Today's failed turns per (bot, group)."""
        if self._routes is None:
            return {}
        return await self._routes.failure_counts(day_start(now))

    def accounts(self) -> list[Account]:
        """The QQ accounts connected to this process (and the ones that went away)."""
        return self._accounts.listed() if self._accounts is not None else []

    async def usage_today(self) -> UsageTotals:
        """Today's model calls, failures and tokens over every group (the ledger)."""
        return await self._admin.usage.totals(now=self.now())

    async def memories(
        self, bot_id: int, group_id: int, *, kind: str | None, user: int | None
    ) -> list[MemoryItem]:
        config = self.group_config(group_id)
        scopes = readable_scopes(bot_id, group_id, config.memory.shared_pools)
        return await self._memory.repo.list_items(
            scopes=scopes, kind=kind, subject_user_id=user, limit=200
        )

    async def retired_memories(
        self, bot_id: int, group_id: int, *, user: int | None
    ) -> list[Retired]:
        """Facts a newer one replaced here, each with its replacement (the update audit)."""
        config = self.group_config(group_id)
        scopes = readable_scopes(bot_id, group_id, config.memory.shared_pools)
        return await retired_items(self._memory.repo, scopes, subject_user_id=user)

    async def memory_admin(self, bot_id: int, group_id: int, args: tuple[str, ...]) -> str:
        """Run `/pallas memory <args>` as the console operator (a superuser): same checks, same
        audit lines as the group command."""
        words = " ".join(("memory", *args))
        # the same audit line as the group command (packages/pallas_admin), by "console"
        log.info("admin /pallas %s by console in group %s", words, group_id)
        cmd = AdminContext(self._admin, bot_id=bot_id, group_id=group_id, user_id=0, args=args)
        result = await memory_command(cmd)
        log.info("console: /pallas %s in group %s → %s", words, group_id, result)
        return result
