"""Section ids, headers and trim tiers of the chat system prompt (its 15 sections, in order).

The order goes from rarely-changing to per-turn content, so providers with prefix caching hit
a long stable prefix: static persona → group profile → per-message retrieval → per-turn
contract / time.
"""

from __future__ import annotations

from typing import Final

GUARD: Final = "guard"
PERSONA: Final = "persona"
SELF_IDENTITY: Final = "self_identity"
GROUP_EXPRESSION: Final = "group_expression"
BEHAVIOR_REFERENCE: Final = "behavior_reference"
MEMORY: Final = "memory"
KNOWLEDGE: Final = "knowledge"
RELATIONSHIP: Final = "relationship"
PERSON_FACTS: Final = "person_facts"
MID_TERM: Final = "mid_term"
GROUP_TIMELINE: Final = "group_timeline"
REPLY_SHAPE: Final = "reply_shape"
TURN_POLICY: Final = "turn_policy"
CURRENT_TIME: Final = "current_time"
TOOL_CONTEXT: Final = "tool_context"

SECTION_IDS: Final[tuple[str, ...]] = (
    GUARD,
    PERSONA,
    SELF_IDENTITY,
    GROUP_EXPRESSION,
    BEHAVIOR_REFERENCE,
    MEMORY,
    KNOWLEDGE,
    RELATIONSHIP,
    PERSON_FACTS,
    MID_TERM,
    GROUP_TIMELINE,
    REPLY_SHAPE,
    TURN_POLICY,
    CURRENT_TIME,
    TOOL_CONTEXT,
)
SECTION_RANK: Final[dict[str, int]] = {sid: i for i, sid in enumerate(SECTION_IDS)}
# How the spec names each section (the console shows the prompt's section order with them).
SECTION_NAMES_ZH: Final[dict[str, str]] = {
    GUARD: "注入护栏", PERSONA: "人设", SELF_IDENTITY: "自我标识", GROUP_EXPRESSION: "群表达指导",
    BEHAVIOR_REFERENCE: "真人接话参考", MEMORY: "记忆", KNOWLEDGE: "知识", RELATIONSHIP: "关系",
    PERSON_FACTS: "人物事实", MID_TERM: "旧话题", GROUP_TIMELINE: "群聊时间线",
    REPLY_SHAPE: "回复形状", TURN_POLICY: "本轮策略", CURRENT_TIME: "当前时间",
    TOOL_CONTEXT: "工具上下文",
}  # fmt: skip

# The retrieval-driven sections 6–11 (memory … group timeline).
CONTEXT_BLOCK_IDS: Final = (MEMORY, KNOWLEDGE, RELATIONSHIP, PERSON_FACTS, MID_TERM, GROUP_TIMELINE)
# Sections emptied for short social turns (no persistent-memory read).
PERSISTENT_MEMORY_IDS: Final = frozenset({MEMORY, RELATIONSHIP, PERSON_FACTS, MID_TERM})

# Never trimmed by the budget and never disabled by an override.
PROTECTED_SECTION_IDS: Final = frozenset({GUARD, PERSONA, SELF_IDENTITY, REPLY_SHAPE})
# Tiny per-turn sections the budget also leaves alone (they steer this very reply).
BUDGET_KEPT_SECTION_IDS: Final = PROTECTED_SECTION_IDS | {TURN_POLICY, CURRENT_TIME}

# System sections in the order the budget gives them up, after all message-side trims.
# Retrieved blocks go first, least directly useful first: old topics (speculative recall) →
# person facts → relationship notes → knowledge snippets → group memory (events, explicit
# teachings). Then the softer style / context blocks, the group timeline last because it is
# what the current message most often refers to.
SYSTEM_TRIM_ORDER: Final[tuple[str, ...]] = (
    MID_TERM,
    PERSON_FACTS,
    RELATIONSHIP,
    KNOWLEDGE,
    MEMORY,
    BEHAVIOR_REFERENCE,
    GROUP_EXPRESSION,
    TOOL_CONTEXT,
    GROUP_TIMELINE,
)

# Headers rendered by this package (the text the model sees).
HEADER_GROUP_TIMELINE: Final = "刚才的群聊"
HEADER_REPLY_SHAPE: Final = "回复形状与输出契约"
HEADER_TURN_POLICY: Final = "本轮策略"
HEADER_CURRENT_TIME: Final = "当前时间"
HEADER_TOOL_CONTEXT: Final = "工具上下文"
HEADER_SELF_IDENTITY: Final = "自我标识"
HEADER_AMBIENT: Final = "群环境摘录"
HEADER_SESSION_SUMMARY: Final = "此前对话摘要"


def section_rank(section_id: str) -> float:
    """Position in the canonical order; unknown (plugin) sections sort after the known ones.

    Anchored ids (`<section>@before:<name>` / `<section>@after:<name>`, placed injections and
    worldbook entries) sort just before / after their anchor section.
    """
    anchor, at, side = section_id.partition("@")
    if at and anchor in SECTION_RANK:
        return SECTION_RANK[anchor] + (-0.5 if side.startswith("before") else 0.5)
    return SECTION_RANK.get(section_id, len(SECTION_IDS))
