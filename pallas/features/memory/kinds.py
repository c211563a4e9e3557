"""Memory kinds: the block kinds stored in `memory_item`, their headers and command aliases.

A kind is the retrieval block kind of `RetrievalConfig` (so each has its own top-k, char cap
and threshold). Old topics (`old_topics`) are session summaries kept by the session package,
not rows of this store.
"""

from __future__ import annotations

from typing import Final

GROUP_MEMORY: Final = "group_memory"
GROUP_EVENTS: Final = "group_events"
IP_KNOWLEDGE: Final = "ip_knowledge"
TEACHINGS: Final = "teachings"
KNOWLEDGE: Final = "knowledge"
RELATIONSHIP: Final = "relationship"
PERSON_FACTS: Final = "person_facts"

STORED_KINDS: Final[tuple[str, ...]] = (
    GROUP_MEMORY,
    GROUP_EVENTS,
    IP_KNOWLEDGE,
    TEACHINGS,
    KNOWLEDGE,
    RELATIONSHIP,
    PERSON_FACTS,
)
# Rendered into the `memory` section in this order, each under its own header.
MEMORY_SECTION_KINDS: Final[tuple[str, ...]] = (GROUP_MEMORY, GROUP_EVENTS, IP_KNOWLEDGE, TEACHINGS)
# Rows about one person (keyed by user id): what "forget me" removes.
PERSONAL_KINDS: Final[tuple[str, ...]] = (PERSON_FACTS, RELATIONSHIP, TEACHINGS)

HEADERS: Final[dict[str, str]] = {
    GROUP_MEMORY: "相关群内记忆",
    GROUP_EVENTS: "已确认群事件",
    IP_KNOWLEDGE: "相关 IP 知识",
    TEACHINGS: "用户明确教导",
    KNOWLEDGE: "相关知识参考 — 仅供参考，不得覆盖核心人设",
    RELATIONSHIP: "与当前对话者的关系备注 — 仅供参考，别生硬提起",
    PERSON_FACTS: "当前对话者的稳定偏好 — 仅供参考",
}

# Names admins type (`/pallas memory add group …`, `pallas memory list --kind fact`).
ALIASES: Final[dict[str, str]] = {
    "group": GROUP_MEMORY,
    "memory": GROUP_MEMORY,
    "event": GROUP_EVENTS,
    "events": GROUP_EVENTS,
    "ip": IP_KNOWLEDGE,
    "teach": TEACHINGS,
    "teaching": TEACHINGS,
    "knowledge": KNOWLEDGE,
    "kb": KNOWLEDGE,
    "relation": RELATIONSHIP,
    "relationship": RELATIONSHIP,
    "fact": PERSON_FACTS,
    "facts": PERSON_FACTS,
    **{kind: kind for kind in STORED_KINDS},
}

SHORT_NAMES: Final[dict[str, str]] = {
    GROUP_MEMORY: "群记忆",
    GROUP_EVENTS: "群事件",
    IP_KNOWLEDGE: "IP知识",
    TEACHINGS: "教导",
    KNOWLEDGE: "知识",
    RELATIONSHIP: "关系",
    PERSON_FACTS: "人物事实",
}


def resolve_kind(name: str) -> str | None:
    """The stored kind for an admin-typed name (``group``, ``ip``, ``fact`` …), or None."""
    return ALIASES.get(name.strip().lower())


def parse_ref(text: str) -> int | None:
    """``mem:42`` / ``#42`` / ``42`` → 42; anything else → None."""
    raw = text.strip().lower().removeprefix("mem:").removeprefix("#")
    return int(raw) if raw.isdigit() else None
