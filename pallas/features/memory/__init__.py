"""Long-term memory: distilled facts about the group and its members, kept per scope (a
group, or a shared `pool:<name>`) and retrieved by relevance (0.6·similarity + 0.3·recency +
0.1·frequency). `MemoryService` stores and retrieves; the context sources (memory, knowledge
with worldbooks, relationship, person facts) render what a turn may read; the extraction hook
distils new facts after replies (budgeted); members say 记住 / 忘记我 (`handle_member_message`)
and admins use `/pallas memory …`. `factory` builds the pieces for the composition root.
"""

from pallas.features.memory.admin import COMMANDS as MEMORY_COMMANDS
from pallas.features.memory.admin import MemoryAdmin
from pallas.features.memory.candidate import MemoryCandidate
from pallas.features.memory.candidate_index import CandidateIndex
from pallas.features.memory.extraction_hook import ExtractionConfigView, MemoryExtractionHook
from pallas.features.memory.factory import (
    TokenBudgetView,
    build_memory_extraction_hook,
    build_memory_service,
    build_memory_sources,
)
from pallas.features.memory.history import Retired, retired_items
from pallas.features.memory.isolation import (
    InvalidPoolName,
    group_scope,
    own_scope,
    pool_scope,
    readable_scopes,
)
from pallas.features.memory.items import normalise_key
from pallas.features.memory.kinds import (
    GROUP_MEMORY,
    KNOWLEDGE,
    PERSON_FACTS,
    PERSONAL_KINDS,
    SHORT_NAMES,
    STORED_KINDS,
    parse_ref,
    resolve_kind,
)
from pallas.features.memory.member_commands import handle_member_message
from pallas.features.memory.prepared import PreparedCandidates, prepare_candidates
from pallas.features.memory.remembered_words import heading_of, stake_words
from pallas.features.memory.repository import MemoryItem, MemoryRepository
from pallas.features.memory.retrieval_config import BlockRetrievalConfig, RetrievalConfig
from pallas.features.memory.scoring import retrieve_prepared
from pallas.features.memory.service import TEXT_MAX_CHARS, MemoryService
from pallas.features.memory.text import warm_up

__all__ = [
    "GROUP_MEMORY",
    "KNOWLEDGE",
    "MEMORY_COMMANDS",
    "PERSONAL_KINDS",
    "PERSON_FACTS",
    "SHORT_NAMES",
    "STORED_KINDS",
    "TEXT_MAX_CHARS",
    "BlockRetrievalConfig",
    "CandidateIndex",
    "ExtractionConfigView",
    "InvalidPoolName",
    "MemoryAdmin",
    "MemoryCandidate",
    "MemoryExtractionHook",
    "MemoryItem",
    "MemoryRepository",
    "MemoryService",
    "PreparedCandidates",
    "Retired",
    "RetrievalConfig",
    "TokenBudgetView",
    "build_memory_extraction_hook",
    "build_memory_service",
    "build_memory_sources",
    "group_scope",
    "handle_member_message",
    "heading_of",
    "normalise_key",
    "own_scope",
    "parse_ref",
    "pool_scope",
    "prepare_candidates",
    "readable_scopes",
    "resolve_kind",
    "retired_items",
    "retrieve_prepared",
    "stake_words",
    "warm_up",
]
