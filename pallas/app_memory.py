"""The one place that builds memory: the store's service, the prompt sources, the extraction hook.

`pallas.app` calls these once per process (one `MemoryService`: its vector index is per
instance); tests call them directly. Every write bumps per-scope generations in the StateStore,
so any other instance's cache (a CLI, a test) still sees every write.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Protocol

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from pallas.context.config import ContextConfig
from pallas.context.context import ContextSource
from pallas.core.clock import Clock
from pallas.core.db.repositories.chat_sessions import ChatSessionRepository
from pallas.core.db.repositories.messages import MessageRepository
from pallas.core.db.repositories.usage import UsageRepository
from pallas.core.state import StateStore
from pallas.features.memory import (
    MemoryEmbeddings,
    MemoryRepository,
    MemoryService,
    ProfileRepository,
    RetrievalConfig,
)
from pallas.features.memory_prompt import (
    KnowledgeSource,
    MemorySource,
    MemorySourceConfig,
    PersonFactsSource,
    RelationshipSource,
)
from pallas.features.memory_upkeep import (
    ExtractionConfigView,
    MemberConsolidator,
    MemoryExpander,
    MemoryExtractionHook,
    TeachJudge,
)
from pallas.features.persona import PersonaPack, PersonaStore
from pallas.features.worldbook import WorldbookLibrary
from pallas.providers.cheap_calls import CheapCalls
from pallas.providers.client import LLMClient
from pallas.providers.encoder_slot import EncoderSlot
from pallas.providers.models import ModelProfile, profile_for


class TokenBudgetView(Protocol):
    """What the prompt's token budget is read from (`GroupConfig` is one)."""

    @property
    def context(self) -> ContextConfig: ...

    @property
    def models(self) -> dict[str, ModelProfile]: ...


def build_memory_service(
    sessions: async_sessionmaker[AsyncSession],
    state: StateStore,
    clock: Clock,
    *,
    llm: LLMClient,
    usage: UsageRepository,
    memory_config: Callable[[int], RetrievalConfig],  # a group's `[memory]`
    embeddings: bool | None = None,  # None: as `llm.embeddings` / `encoder` say (False: never)
    encoder: EncoderSlot | None = None,  # the offline sentence encoder (`memory.embedder`)
) -> MemoryService:
    # the upkeep pieces first: the service is handed every collaborator when it is built
    profiles = ProfileRepository(sessions)
    cheap = CheapCalls(clock=clock, usage=usage, llm=llm)  # budgeted one-question calls
    expander = MemoryExpander(cheap=cheap, memory_config=memory_config)
    consolidator = MemberConsolidator(
        clock=clock, usage=usage, llm=llm, profiles=profiles, memory_config=memory_config
    )
    repo = MemoryRepository(sessions)
    # the vector work: the local encoder or the provider's model (`memory.embedder`)
    vectors = MemoryEmbeddings(
        repo, state, clock, llm=llm, encoder=encoder, allowed=embeddings is not False
    )
    return MemoryService(
        repo,
        state,
        clock,
        embeddings=vectors,
        judge=TeachJudge(cheap=cheap, memory_config=memory_config),
        profiles=profiles,
        write_listeners=(expander.expand,),
        change_listeners=(consolidator.changed,),
    )


def context_token_budget(llm: LLMClient) -> Callable[[TokenBudgetView], int]:
    """The prompt token budget of a group (worldbook budget share is taken of it)."""

    def budget(config: TokenBudgetView) -> int:
        if config.context.token_budget:
            return config.context.token_budget
        profile = profile_for(config.models, llm.model_for("chat"))
        return max(profile.context_window - profile.reserved_output, 256)

    return budget


def build_memory_sources(
    service: MemoryService,
    *,
    worldbooks: WorldbookLibrary,
    regex_dir: Path,
    messages: MessageRepository,
    state: StateStore,
    llm: LLMClient,
    personas: PersonaStore,
) -> list[ContextSource[MemorySourceConfig]]:
    """memory → knowledge → relationship → person facts (the order their blocks render in)."""
    knowledge = KnowledgeSource(
        service,
        worldbooks,
        messages=messages,
        state=state,
        context_tokens=context_token_budget(llm),
        regex_dir=regex_dir,
        personas=personas,
    )
    return [
        MemorySource(service),
        knowledge,
        RelationshipSource(service),
        PersonFactsSource(service),
    ]


def build_memory_extraction_hook(
    service: MemoryService,
    *,
    state: StateStore,
    clock: Clock,
    messages: MessageRepository,
    chat_sessions: ChatSessionRepository,
    usage: UsageRepository,
    llm: LLMClient,
    flush: Callable[[], Awaitable[None]],
    group_config: Callable[[int], ExtractionConfigView],
    persona: Callable[[str], PersonaPack],
) -> MemoryExtractionHook:
    return MemoryExtractionHook(
        service,
        state=state,
        clock=clock,
        messages=messages,
        chat_sessions=chat_sessions,
        usage=usage,
        llm=llm,
        flush=flush,
        group_config=group_config,
        persona=persona,
    )
