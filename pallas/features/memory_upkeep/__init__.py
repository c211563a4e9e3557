"""Memory upkeep: the cheap model keeps the stored facts current, in the background.

Extraction after replies (`extraction`, `extraction_hook`, budgeted), the teaching judge that
decides what a taught fact replaces (`update_judge`), member-profile consolidation
(`consolidation`, `consolidation_job`) and index-time expansion (`expansion`, `expansion_job`).
It writes through the memory store (`pallas.features.memory`).
"""

from pallas.features.memory_upkeep.consolidation_job import MemberConsolidator
from pallas.features.memory_upkeep.expansion_job import MemoryExpander
from pallas.features.memory_upkeep.extraction_hook import ExtractionConfigView, MemoryExtractionHook
from pallas.features.memory_upkeep.update_judge import TeachJudge

__all__ = [
    "ExtractionConfigView",
    "MemberConsolidator",
    "MemoryExpander",
    "MemoryExtractionHook",
    "TeachJudge",
]
