"""Build the memory pieces over a runtime: service, context sources, extraction hook.

Several instances may exist in one process (the chat service, the member-command plugin, admin
commands): they share the database and the StateStore, and writes bump per-scope generations
there, so every instance's cache sees every write.
"""

from __future__ import annotations

from collections.abc import Callable

from pallas.core.db.repositories.memory import MemoryRepository
from pallas.product.config import GroupConfig
from pallas.product.llm.context.context import ContextSource
from pallas.product.llm.memory.expansion_job import MemoryExpander
from pallas.product.llm.memory.extraction_hook import MemoryExtractionHook
from pallas.product.llm.memory.service import MemoryService
from pallas.product.llm.memory.sources import (
    KnowledgeSource,
    MemorySource,
    PersonFactsSource,
    RelationshipSource,
)
from pallas.product.llm.memory.worldbook.service import WorldbookLibrary
from pallas.product.llm.provider.models import profile_for
from pallas.runtime import PallasRuntime


def build_memory_service(runtime: PallasRuntime) -> MemoryService:
    service = MemoryService(
        MemoryRepository(runtime.sessions),
        runtime.state,
        runtime.clock,
        llm=runtime.llm,
        embeddings=bool(runtime.settings.pallas_embedding_model),
    )
    service.write_listeners.append(MemoryExpander(runtime).expand)
    return service


def context_token_budget(runtime: PallasRuntime) -> Callable[[GroupConfig], int]:
    """The prompt token budget of a group (worldbook budget share is taken of it)."""

    def budget(config: GroupConfig) -> int:
        if config.context.token_budget:
            return config.context.token_budget
        profile = profile_for(config.models, runtime.llm.model_for("chat"))
        return max(profile.context_window - profile.reserved_output, 256)

    return budget


def build_memory_sources(
    runtime: PallasRuntime, service: MemoryService | None = None
) -> list[ContextSource]:
    """memory → knowledge → relationship → person facts (the spec's order)."""
    service = service or build_memory_service(runtime)
    knowledge = KnowledgeSource(
        service,
        WorldbookLibrary(runtime.settings.worldbooks_dir),
        messages=runtime.repos.messages,
        state=runtime.state,
        context_tokens=context_token_budget(runtime),
        regex_dir=runtime.settings.pallas_config_dir / "regex",
        personas=runtime.personas,
    )
    return [
        MemorySource(service),
        knowledge,
        RelationshipSource(service),
        PersonFactsSource(service),
    ]


def build_memory_extraction_hook(
    runtime: PallasRuntime, service: MemoryService | None = None
) -> MemoryExtractionHook:
    return MemoryExtractionHook(runtime, service or build_memory_service(runtime))
