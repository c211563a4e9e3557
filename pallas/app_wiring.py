"""Which context sources and after-turn hooks a deployment runs (used by `pallas.app`).

The one place that lists the pluggable stages, in the order their results are merged
(memory → knowledge → relationship → person facts + old topics; style learning; …). The
pieces are built by the composition root (`pallas.app.build_app`) from the stores they use.
"""

from __future__ import annotations

from collections.abc import Sequence

from pallas.context.context import ContextSource
from pallas.core.turn import AfterTurnHook
from pallas.features.learning import GroupLearningSource
from pallas.features.memory import MemoryExtractionHook
from pallas.features.session import OldTopicsSource, SessionSummaryHook


def context_sources(
    learning: GroupLearningSource,
    memory_sources: Sequence[ContextSource],
    old_topics: OldTopicsSource,
) -> list[ContextSource]:
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
        memory_extraction,  # ADD-only facts, batched, budgeted
    ]
