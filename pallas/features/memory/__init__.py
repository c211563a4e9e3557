"""Long-term memory, the store: distilled facts about the group and its members, kept per scope
(a group, or a shared `pool:<name>`) in `memory_item`, and read back ranked by relevance.

`MemoryService` stores (normalise, dedupe, retire what a member's new fact replaces — by a
judgement or by the rules of `denials` / `slots`) and retrieves (cached, scoped, ranked by
`pallas.ranking`); the consolidated profiles (`profile_store`), the scope rules (`isolation`),
the kinds, retired history and the one config model of ``[memory]`` (`config`). Fact upkeep,
prompt sources and commands build on it in their own slices.
"""

from pallas.features.memory.config import (
    BlockRetrievalConfig,
    ExpansionConfig,
    ExtractionConfig,
    MemberProfileConfig,
    RetrievalConfig,
)
from pallas.features.memory.denials import ALREADY, CHANGE_PARTICLE, CLAUSE_ENDS, rule_update
from pallas.features.memory.embeddings import MemoryEmbeddings
from pallas.features.memory.fact_guard import DEFAULT_BOT_NAMES, classify_fact
from pallas.features.memory.history import Retired, retired_items
from pallas.features.memory.isolation import (
    InvalidPoolName,
    group_scope,
    own_scope,
    pool_scope,
    private_fact_scopes,
    readable_scopes,
)
from pallas.features.memory.items import expansion_text, fingerprint, normalise_key
from pallas.features.memory.judgement import (
    OPS,
    FactJudge,
    Judgement,
    JudgeVerdict,
    KnownFact,
    model_judgement,
)
from pallas.features.memory.kinds import (
    GROUP_EVENTS,
    GROUP_MEMORY,
    HEADERS,
    IP_KNOWLEDGE,
    KNOWLEDGE,
    MEMORY_SECTION_KINDS,
    PERSON_FACTS,
    PERSONAL_KINDS,
    RELATIONSHIP,
    SHORT_NAMES,
    STORED_KINDS,
    TEACHINGS,
    parse_ref,
    resolve_kind,
)
from pallas.features.memory.meaning import clearly_nearest, meaning_text, related
from pallas.features.memory.profile_store import ProfileRepository, Statement, StoredProfile
from pallas.features.memory.records import MemoryItem, WriteOutcome
from pallas.features.memory.repository import MemoryRepository
from pallas.features.memory.service import TEXT_MAX_CHARS, BlockResult, MemoryService

__all__ = [
    "ALREADY",
    "CHANGE_PARTICLE",
    "CLAUSE_ENDS",
    "DEFAULT_BOT_NAMES",
    "GROUP_EVENTS",
    "GROUP_MEMORY",
    "HEADERS",
    "IP_KNOWLEDGE",
    "KNOWLEDGE",
    "MEMORY_SECTION_KINDS",
    "OPS",
    "PERSONAL_KINDS",
    "PERSON_FACTS",
    "RELATIONSHIP",
    "SHORT_NAMES",
    "STORED_KINDS",
    "TEACHINGS",
    "TEXT_MAX_CHARS",
    "BlockResult",
    "BlockRetrievalConfig",
    "ExpansionConfig",
    "ExtractionConfig",
    "FactJudge",
    "InvalidPoolName",
    "JudgeVerdict",
    "Judgement",
    "KnownFact",
    "MemberProfileConfig",
    "MemoryEmbeddings",
    "MemoryItem",
    "MemoryRepository",
    "MemoryService",
    "ProfileRepository",
    "Retired",
    "RetrievalConfig",
    "Statement",
    "StoredProfile",
    "WriteOutcome",
    "classify_fact",
    "clearly_nearest",
    "expansion_text",
    "fingerprint",
    "group_scope",
    "meaning_text",
    "model_judgement",
    "normalise_key",
    "own_scope",
    "parse_ref",
    "pool_scope",
    "private_fact_scopes",
    "readable_scopes",
    "related",
    "resolve_kind",
    "retired_items",
    "rule_update",
]
