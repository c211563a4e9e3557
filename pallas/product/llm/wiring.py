"""Which context sources and after-turn hooks a deployment runs (used by `pallas.app`).

The one place that lists the pluggable stages, in the order the spec gives them
(memory → knowledge → relationship → person facts + old topics; style learning; …).
"""

from __future__ import annotations

from pallas.core.db.repositories.session_topics import (
    ImageDescriptionRepository,
    SessionTopicRepository,
)
from pallas.product.llm.chat_turn import AfterTurnHook
from pallas.product.llm.context.context import ContextSource
from pallas.product.llm.learning.context_source import GroupLearningSource
from pallas.product.llm.memory.factory import (
    build_memory_extraction_hook,
    build_memory_sources,
)
from pallas.product.llm.memory.service import MemoryService
from pallas.product.llm.session.image_descriptions import PlaceholderDescriber
from pallas.product.llm.session.old_topics import OldTopicsSource
from pallas.product.llm.session.session_summary import SessionSummaryHook
from pallas.runtime import PallasRuntime


def context_sources(
    runtime: PallasRuntime,
    learning: GroupLearningSource | None = None,
    *,
    memory: MemoryService | None = None,
) -> list[ContextSource]:
    # group_expression, behavior_ref, reply_shape
    learning = learning or GroupLearningSource(runtime.sessions, runtime.state)
    return [
        learning,
        *build_memory_sources(runtime, memory),  # memory → knowledge → relationship → person_facts
        build_old_topics_source(runtime),  # mid_term: 【相关旧话题】
    ]


def after_turn_hooks(
    runtime: PallasRuntime, *, memory: MemoryService | None = None
) -> list[AfterTurnHook]:
    return [
        build_session_summary_hook(runtime),  # 长会话压缩
        build_memory_extraction_hook(runtime, memory),  # ADD-only facts, batched, budgeted
    ]


def build_old_topics_source(runtime: PallasRuntime) -> OldTopicsSource:
    """The source over the runtime's stores (registered in `context_sources`)."""
    return OldTopicsSource(
        topics=SessionTopicRepository(runtime.sessions),
        chat_sessions=runtime.repos.chat_sessions,
    )


def build_session_summary_hook(runtime: PallasRuntime) -> SessionSummaryHook:
    """The hook over the runtime's stores (registered in `after_turn_hooks`)."""
    return SessionSummaryHook(
        chat_sessions=runtime.repos.chat_sessions,
        topics=SessionTopicRepository(runtime.sessions),
        usage=runtime.repos.usage,
        llm=runtime.llm,
        state=runtime.state,
        clock=runtime.clock,
        describer=PlaceholderDescriber(
            llm=runtime.llm,
            cache=ImageDescriptionRepository(runtime.sessions),
            usage=runtime.repos.usage,
            clock=runtime.clock,
        ),
    )
