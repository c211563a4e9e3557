"""Admin commands as plain functions: `/pallas <name> [args]` in a group, text back.

The NoneBot plugin only checks permission and dispatches; every command is a core function
over the app's services (`AdminServices`, built once by `pallas.app`), so the same logic backs
the CLI and tests.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from pallas.config import GroupConfig
from pallas.core.clock import Clock
from pallas.core.config_files import GroupConfigStore
from pallas.core.db.durable_writer import ThreadedMessageWriter
from pallas.core.db.repositories.messages import MessageRepository
from pallas.core.db.repositories.snapshots import SnapshotRepository
from pallas.core.db.repositories.usage import UsageRepository
from pallas.core.db.writer import MessageWriter
from pallas.core.settings import PallasSettings
from pallas.core.state import StateStore
from pallas.features.learning.feedback_service import FeedbackStores
from pallas.features.learning.group_insight_processor import GroupInsightProcessor
from pallas.features.learning.repository import LearningRepository
from pallas.features.memory.service import MemoryService
from pallas.features.stickers.describe import StickerDescriber
from pallas.features.stickers.repository import StickerRepository
from pallas.features.svars.service import SvarService
from pallas.routing.router import Router


@dataclass(frozen=True, slots=True)
class Deployment:
    """What the admin commands and the console show of the deployment's settings — not the
    settings themselves: no API key or console token travels with the services."""

    replies_enabled: bool
    daily_call_cap: int  # 0: no cap
    daily_token_cap: int
    data_dir: Path
    groups_dir: Path
    chat_model: str
    cheap_model: str
    vision_model: str

    @classmethod
    def of(cls, settings: PallasSettings) -> Deployment:
        return cls(
            replies_enabled=settings.replies_enabled,
            daily_call_cap=settings.pallas_daily_call_cap,
            daily_token_cap=settings.pallas_daily_token_cap,
            data_dir=settings.pallas_data_dir,
            groups_dir=settings.groups_dir,
            chat_model=settings.pallas_chat_model,
            cheap_model=settings.pallas_cheap_model,
            vision_model=settings.pallas_vision_model,
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

    def group_config(self, group_id: int) -> GroupConfig:
        return self.configs.get(group_id)


@dataclass(frozen=True, slots=True)
class AdminContext:
    services: AdminServices
    bot_id: int
    group_id: int
    user_id: int
    args: tuple[str, ...]
    reply_to: int | None = None  # message id the admin quoted, if any


AdminHandler = Callable[[AdminContext], Awaitable[str]]


@dataclass(frozen=True, slots=True)
class AdminCommand:
    name: str
    usage: str
    summary: str
    handler: AdminHandler
