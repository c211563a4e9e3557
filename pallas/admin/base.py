"""The app's services as the admin commands see them (`AdminServices`, built once by
`pallas.app`) and what they show of the deployment.

The NoneBot plugin only checks permission and dispatches; every command is a core function
(`pallas.core.admin_commands`), so the same logic backs the CLI and tests. The registry
(`pallas.admin`) binds each feature slice's commands to the part of these services it reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from pallas.config import GroupConfig
from pallas.core.admin_commands import AdminCommand, AdminContext
from pallas.core.clock import Clock
from pallas.core.config_files import GroupConfigStore
from pallas.core.db.durable_writer import ThreadedMessageWriter
from pallas.core.db.repositories.messages import MessageRepository
from pallas.core.db.repositories.snapshots import SnapshotRepository
from pallas.core.db.repositories.usage import UsageRepository
from pallas.core.db.writer import MessageWriter
from pallas.core.settings import PallasSettings
from pallas.core.state import StateStore
from pallas.features.learning import FeedbackStores, GroupInsightProcessor, LearningRepository
from pallas.features.memory import MemoryService
from pallas.features.reminders import ReminderRepository
from pallas.features.stickers import StickerDescriber, StickerRepository
from pallas.features.svars import SvarService
from pallas.features.tools import McpHub
from pallas.providers.client import LLMClient
from pallas.routing.router import Router


@dataclass(frozen=True, slots=True)
class Deployment:
    """What the admin commands and the console show of the deployment's settings — not the
    settings themselves: no API key or console token travels with the services. Whether replies
    are on and which models answer is the LLM client's (`llm.enabled`, `llm.model_for`): the
    console's 模型 page can change them while the bot runs."""

    daily_call_cap: int  # 0: no cap
    daily_token_cap: int
    data_dir: Path
    groups_dir: Path
    transcribe_model: str = ""  # "": voice messages stay [语音]
    superusers: frozenset[int] = frozenset()  # SUPERUSERS (the first-run checklist)

    @classmethod
    def of(cls, settings: PallasSettings, superusers: frozenset[int] = frozenset()) -> Deployment:
        return cls(
            daily_call_cap=settings.pallas_daily_call_cap,
            daily_token_cap=settings.pallas_daily_token_cap,
            data_dir=settings.pallas_data_dir,
            groups_dir=settings.groups_dir,
            transcribe_model=settings.pallas_transcribe_model,
            superusers=superusers,
        )


@dataclass(frozen=True, slots=True)
class AdminServices:
    """What the admin commands read and change (one per app, built by `pallas.app`)."""

    deployment: Deployment
    clock: Clock
    state: StateStore
    configs: GroupConfigStore[GroupConfig]
    writer: MessageWriter | ThreadedMessageWriter  # flushed before counting stored rows
    messages: MessageRepository
    usage: UsageRepository
    snapshots: SnapshotRepository
    routing: Router
    memory: MemoryService
    learning: LearningRepository
    feedback: FeedbackStores
    insight: GroupInsightProcessor
    stickers: StickerRepository
    describer: StickerDescriber
    svars: SvarService
    llm: LLMClient  # the endpoint chains and their breakers (status)
    sessions: async_sessionmaker[AsyncSession]  # the database's size and oldest row (status)
    mcp: McpHub | None = None  # the chat turns' MCP servers (/pallas tool)
    reminders: ReminderRepository | None = None  # members' reminders (/pallas reminders)

    def group_config(self, group_id: int) -> GroupConfig:
        return self.configs.get(group_id)


AdminCtx: TypeAlias = AdminContext[AdminServices]  # a command over the whole app
AppCommand: TypeAlias = AdminCommand[AdminServices]  # what the registry lists

__all__ = ["AdminCommand", "AdminContext", "AdminCtx", "AdminServices", "AppCommand", "Deployment"]
