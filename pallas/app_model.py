"""`PallasApp`: the bot's services, one of each (built by `pallas.app.build_app`)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from pallas.admin.base import AdminServices
from pallas.config import GroupConfig
from pallas.core.group_preload import GroupPreload
from pallas.features.cost import CostGuard
from pallas.features.learning import FeedbackStores, GroupInsightProcessor, GroupLearningSource
from pallas.features.memory import MemoryService
from pallas.features.reminders import ReminderService
from pallas.features.retention import RetentionJob
from pallas.features.session import SessionTopicRepository
from pallas.features.stickers import StickerDescriber, StickerService
from pallas.features.tools import ServerStatus
from pallas.features.voice import VoiceService
from pallas.runtime import PallasRuntime
from pallas.turn import Addressing, TurnExtras
from pallas.turn.route import RouteStep
from pallas.turn.service import ChatTurnService
from pallas.web.backend import ConsoleBackend, GroupNamesSource
from pallas.web.queries import ConsoleQueries

SHUTDOWN_DRAIN_S = 8.0  # docker-compose's stop_grace_period (20 s) leaves room for the rest

log = logging.getLogger("pallas.app")


@dataclass(frozen=True, slots=True)
class Part:
    """One part of the app's lifespan (as nonebot's `Lifespan`): the app starts its parts in
    the order `build_app` declares them and stops them in reverse, so a part stops before
    whatever it was built over (the chat before the memory it writes, all before the
    runtime)."""

    name: str
    stop: Callable[[], Awaitable[object]]
    start: Callable[[], Awaitable[object]] | None = None


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
        turn_extras: TurnExtras,
        stickers: StickerService,
        cost: CostGuard,
        chat: ChatTurnService,
        feedback: FeedbackStores,
        insight: GroupInsightProcessor,
        describer: StickerDescriber,
        admin: AdminServices,
        preload: GroupPreload[GroupConfig] | None = None,
        topics: SessionTopicRepository | None = None,
        retention: RetentionJob | None = None,
        reminders: ReminderService | None = None,
        voice: VoiceService | None = None,
        parts: Sequence[Part] = (),
    ) -> None:
        self.runtime = runtime
        self.addressing = addressing
        self.memory = memory
        self.learning = learning
        self.turn_extras = turn_extras
        self.stickers = stickers
        self.cost = cost
        self.chat = chat
        self.feedback = feedback  # negative feedback (packages/feedback, /pallas feedback)
        self.insight = insight  # the group-insight sweep (packages/group_insight, /pallas learn)
        self.describer = describer  # the sticker describe job (packages/stickers)
        self.admin = admin  # `/pallas …` commands, the CLI, the web console
        self.preload = preload  # a group's reply-path entries, loaded when the group is seen
        self.topics = topics  # session topics: recalls are written behind, flushed at stop
        self.retention = retention  # old rows pruned per group (packages/retention, hourly)
        self.reminders = reminders  # members' reminders (packages/reminders, /pallas reminders)
        self.voice = voice  # the persona speaks (packages/voice, the deliver step)
        self.parts = tuple(parts)  # started in this order, stopped in reverse
        self._console: ConsoleBackend | None = None

    def console_backend(self, group_names: GroupNamesSource | None = None) -> ConsoleBackend:
        """The web console's adapter over this app (built once, on first use)."""
        if self._console is None:
            runtime = self.runtime
            self._console = ConsoleBackend(
                self.admin,
                ConsoleQueries(runtime.sessions),
                group_names=group_names,
                routes=runtime.repos.routes,
                accounts=runtime.accounts,
                started_at=runtime.started_at,
                mcp_statuses=self._mcp_statuses(),
                voice=self.voice,
            )
        return self._console

    def _mcp_statuses(self) -> Callable[[], list[ServerStatus]] | None:
        hub = self.chat.tools.hub if self.chat.tools is not None else None
        return hub.statuses if hub is not None else None

    @property
    def route_step(self) -> RouteStep:
        return self.chat.route_step

    async def start(self) -> None:
        """Start the parts, in order."""
        for part in self.parts:
            if part.start is not None:
                await part.start()

    async def stop(self) -> None:
        """Stop the parts in reverse order: after-turn work and background work are finished
        (or named as dropped, within `SHUTDOWN_DRAIN_S`) before the stores they write close.
        A part that fails to stop is logged and the others still stop."""
        for part in reversed(self.parts):
            try:
                await part.stop()
            except Exception:
                log.exception("stopping %s failed", part.name)


__all__ = ["SHUTDOWN_DRAIN_S", "PallasApp", "Part"]
