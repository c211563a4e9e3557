"""`PallasApp`: the bot's services, one of each (built by `pallas.app.build_app`)."""

from __future__ import annotations

from collections.abc import Callable

from pallas.admin.base import AdminServices
from pallas.config import GroupConfig
from pallas.core.group_preload import GroupPreload
from pallas.features.cost import CostGuard
from pallas.features.learning import FeedbackStores, GroupInsightProcessor, GroupLearningSource
from pallas.features.memory import MemoryService
from pallas.features.reminders import ReminderFirer, ReminderService
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
        self.reminder_firer: ReminderFirer | None = None  # started by packages/reminders
        self.voice = voice  # the persona speaks (packages/voice, the deliver step)
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

    async def stop(self) -> None:
        """Finish after-turn work, then close the runtime (LLM client, writer, database)."""
        if self.reminder_firer is not None:
            await self.reminder_firer.stop()
        if self.preload is not None:
            await self.preload.close()
        if self.route_step.known_stakes is not None:
            await self.route_step.known_stakes.close()
        await self.chat.drain_background()
        # the memory's own background work (expansion, consolidation, embedding backfill,
        # touches) that the last turns started: finished, or named as dropped, within a bound
        await self.memory.drain(within_s=SHUTDOWN_DRAIN_S)
        if self.chat.tools is not None:  # the MCP servers it started
            await self.chat.tools.close()
        if self.topics is not None:
            await self.topics.flush()
        if self.voice is not None:
            await self.voice.speech.close()
        await self.runtime.stop()


__all__ = ["SHUTDOWN_DRAIN_S", "PallasApp"]
