"""The feature services the composition root (`pallas.app.build_app`) builds, one helper each.

Each `*_for(runtime)` picks out of the runtime only the stores its service uses. Also the one
place that lists the pluggable stages in the order their results are merged: context sources
(style learning → memory → knowledge → relationship → person facts → old topics) and after-turn
hooks (session compression, memory extraction).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Sequence

from pallas.admin.base import AdminServices, Deployment
from pallas.app_memory import (
    build_memory_extraction_hook,
    build_memory_service,
    build_memory_sources,
)
from pallas.config import GroupConfig
from pallas.context.context import ContextSource
from pallas.core.turn import AfterTurnHook
from pallas.features.cost import CostGuard, Limits, UsageCounters
from pallas.features.learning import (
    FeedbackRepository,
    FeedbackStores,
    GroupInsightProcessor,
    GroupLearningSource,
    LearningRepository,
)
from pallas.features.memory import MemoryService
from pallas.features.memory_upkeep import MemoryExtractionHook
from pallas.features.persona import PersonaPack
from pallas.features.reminders import (
    ModelTimeReader,
    ReminderConfig,
    ReminderFirer,
    ReminderPhraser,
    ReminderRepository,
    ReminderSender,
    ReminderService,
)
from pallas.features.session import (
    ImageDescriptionRepository,
    OldTopicsSource,
    PlaceholderDescriber,
    SessionSummaryHook,
    SessionTopicRepository,
)
from pallas.features.stickers import StickerDescriber, StickerRepository
from pallas.features.svars import SessionVariableRepository, SvarService
from pallas.features.tools import McpHub
from pallas.features.voice import VoiceService
from pallas.features.worldbook import WorldbookLibrary
from pallas.providers.breaker import Breakers
from pallas.providers.cheap_calls import CheapCalls
from pallas.providers.tts import SpeechClient
from pallas.runtime import PallasRuntime
from pallas.turn import TurnExtras, guard_answer, protected_text


def context_sources(
    learning: GroupLearningSource,
    memory_sources: Sequence[ContextSource[GroupConfig]],
    old_topics: OldTopicsSource,
) -> list[ContextSource[GroupConfig]]:
    # group_expression, behavior_ref, reply_shape
    return [
        learning,
        *memory_sources,  # memory → knowledge → relationship → person_facts
        old_topics,  # mid_term: 【相关旧话题】
    ]


def after_turn_hooks(
    session_summary: SessionSummaryHook, memory_extraction: MemoryExtractionHook
) -> list[AfterTurnHook]:
    return [
        session_summary,  # 长会话压缩
        memory_extraction,  # facts that add / update / deny, batched, budgeted
    ]


def memory_service_for(runtime: PallasRuntime) -> MemoryService:
    """A memory service over the runtime's stores (`build_app` makes the app's one)."""
    return build_memory_service(
        runtime.sessions,
        runtime.state,
        runtime.clock,
        llm=runtime.llm,
        usage=runtime.repos.usage,
        memory_config=lambda group_id: runtime.group_configs.get(group_id).memory,
        encoder=runtime.encoder,
    )  # vectors: the local encoder once loaded, or the provider's model (`memory.embedder`)


def memory_sources_for(
    runtime: PallasRuntime,
    service: MemoryService,
    *,
    worldbooks: WorldbookLibrary | None = None,
) -> Sequence[ContextSource[GroupConfig]]:
    """memory → knowledge → relationship → person facts over the runtime's stores, reading
    `service` (the app's one; a CLI or a test passes its own `memory_service_for(runtime)`)."""
    settings = runtime.settings
    return build_memory_sources(
        service,
        worldbooks=worldbooks or WorldbookLibrary(settings.worldbooks_dir),
        regex_dir=settings.pallas_config_dir / "regex",
        messages=runtime.repos.messages,
        state=runtime.state,
        llm=runtime.llm,
        personas=runtime.personas,
    )


def extraction_hook_for(runtime: PallasRuntime, service: MemoryService) -> MemoryExtractionHook:
    return build_memory_extraction_hook(
        service,
        state=runtime.state,
        clock=runtime.clock,
        messages=runtime.repos.messages,
        chat_sessions=runtime.repos.chat_sessions,
        usage=runtime.repos.usage,
        llm=runtime.llm,
        flush=runtime.writer.flush,
        group_config=runtime.group_configs.get,
        persona=runtime.personas.get,
    )


def session_summary_hook_for(
    runtime: PallasRuntime, topics: SessionTopicRepository | None = None
) -> SessionSummaryHook:
    return SessionSummaryHook(
        chat_sessions=runtime.repos.chat_sessions,
        topics=topics or SessionTopicRepository(runtime.sessions),
        usage=runtime.repos.usage,
        llm=runtime.llm,
        state=runtime.state,
        clock=runtime.clock,
        group_config=runtime.group_configs.get,
        describer=PlaceholderDescriber(
            llm=runtime.llm,
            cache=ImageDescriptionRepository(runtime.sessions),
            usage=runtime.repos.usage,
            clock=runtime.clock,
        ),
    )


def turn_extras_for(runtime: PallasRuntime, memory: MemoryService) -> TurnExtras:
    return TurnExtras(
        messages=runtime.repos.messages,
        state=runtime.state,
        clock=runtime.clock,
        llm=runtime.llm,
        svars=svars_for(runtime),
        memory=memory,
        transcribe=bool(runtime.settings.pallas_transcribe_model),
    )


def svars_for(runtime: PallasRuntime) -> SvarService:
    return SvarService(SessionVariableRepository(runtime.sessions), runtime.clock)


def feedback_for(runtime: PallasRuntime) -> FeedbackStores:
    return FeedbackStores(
        learning=LearningRepository(runtime.sessions),
        feedback=FeedbackRepository(runtime.sessions),
        snapshots=runtime.repos.snapshots,
        state=runtime.state,
        clock=runtime.clock,
        group_config=runtime.group_configs.get,
        superusers=runtime.superusers,
    )


def insight_for(runtime: PallasRuntime) -> GroupInsightProcessor:
    return GroupInsightProcessor(
        LearningRepository(runtime.sessions),
        messages=runtime.repos.messages,
        state=runtime.state,
        clock=runtime.clock,
        llm=runtime.llm,
        flush=runtime.writer.flush,
        group_config=runtime.group_configs.get,
    )


def describer_for(runtime: PallasRuntime) -> StickerDescriber:
    return StickerDescriber(
        StickerRepository(runtime.sessions),
        runtime.repos.usage,
        runtime.clock,
        runtime.llm,
        runtime.group_configs.get,
    )


def cost_guard_for(runtime: PallasRuntime, rng: random.Random | None = None) -> CostGuard:
    """The deployment's guard: counters in the StateStore, seeded from the usage ledger."""
    llm, settings = runtime.llm, runtime.settings

    def cheap_model() -> str | None:  # read per check: the console may save another model
        cheap = llm.model_for("cheap")
        return cheap if cheap and cheap != llm.model_for("chat") else None

    return CostGuard(
        UsageCounters(runtime.state, runtime.repos.usage),
        deployment=Limits(settings.pallas_daily_call_cap, settings.pallas_daily_token_cap),
        cheap_model=cheap_model(),
        superusers=runtime.superusers,
        rng=rng or random.Random(),
        cheap_model_of=cheap_model,
    )


def voice_guard(text: str, persona: PersonaPack) -> tuple[str, str]:
    """The text replies' output guard over one spoken line: (the guarded text, the reason)."""
    result = guard_answer([text], protected_text(persona))
    return (result.bubbles[0] if result.bubbles else ""), result.reason


def voice_service_for(runtime: PallasRuntime) -> VoiceService:
    """The persona's voice: TTS over `[voice] providers`, breakers shared with the chat
    endpoints' `[breaker]` settings (task `tts`), usage in the ledger."""
    speech = SpeechClient(
        runtime.settings,
        runtime.repos.usage,
        runtime.clock,
        Breakers(runtime.state, runtime.llm.providers.breaker),
    )
    return VoiceService(speech, runtime.state, runtime.clock, voice_guard)


def admin_services_for(
    runtime: PallasRuntime,
    *,
    memory: MemoryService,
    feedback: FeedbackStores | None = None,
    insight: GroupInsightProcessor | None = None,
    describer: StickerDescriber | None = None,
    mcp: McpHub | None = None,
) -> AdminServices:
    """The admin commands' services (`build_app` passes the app's own; the CLI and tests
    build them over a runtime)."""
    return AdminServices(
        deployment=Deployment.of(runtime.settings, runtime.superusers),
        clock=runtime.clock,
        state=runtime.state,
        configs=runtime.group_configs,
        writer=runtime.writer,
        messages=runtime.repos.messages,
        usage=runtime.repos.usage,
        snapshots=runtime.repos.snapshots,
        routing=runtime.routing,
        memory=memory,
        learning=LearningRepository(runtime.sessions),
        feedback=feedback or feedback_for(runtime),
        insight=insight or insight_for(runtime),
        stickers=StickerRepository(runtime.sessions),
        describer=describer or describer_for(runtime),
        svars=svars_for(runtime),
        llm=runtime.llm,
        sessions=runtime.sessions,
        mcp=mcp,
        reminders=ReminderRepository(runtime.sessions),
    )


def reminders_for(runtime: PallasRuntime) -> ReminderService:
    """Members' reminders: the rules, the cheap model when they cannot read the time, the
    rows (`build_app` makes the app's one; tests and the CLI build one over a runtime)."""

    def config(group_id: int) -> ReminderConfig:
        return runtime.group_configs.get(group_id).reminders

    cheap = CheapCalls(clock=runtime.clock, usage=runtime.repos.usage, llm=runtime.llm)
    reader = ModelTimeReader(cheap=cheap, config=config)
    repository = ReminderRepository(runtime.sessions)
    return ReminderService(repository, clock=runtime.clock, config=config, model_time=reader)


def reminder_firer_for(
    runtime: PallasRuntime,
    reminders: ReminderService,
    sender: ReminderSender,
    *,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> ReminderFirer:
    """The poll that fires due reminders through `sender` (the edge's accounts): started by
    the `reminders` plugin once the app is up."""

    def persona_name(group_id: int) -> str:
        return runtime.personas.get(runtime.group_configs.get(group_id).persona).name

    phraser = ReminderPhraser(
        clock=runtime.clock,
        usage=runtime.repos.usage,
        llm=runtime.llm,
        config=reminders.config,
        persona_name=persona_name,
    )
    return ReminderFirer(
        reminders.repository,
        clock=runtime.clock,
        config=reminders.config,
        sender=sender,
        local_ids=runtime.accounts.connected_ids,
        deployment_ids=runtime.deployment_ids,
        sleep=sleep,
        phraser=phraser.phrase,  # only where `[reminders] persona_phrasing` is on
    )
