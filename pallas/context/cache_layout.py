"""The request laid out for providers' prefix caches (`[context] prompt_layout = "cache"`).

Providers bill the longest prefix a request shares with a recent one at a fraction of the
price (DeepSeek in 64-token units, OpenAI from 1,024 tokens, Qwen, Kimi, GLM alike). The
spec's layout puts every section in one system message, so the first byte that changes (the
group timeline, the retrieval blocks, the time) sits early and nothing after it — the whole
session history included — is ever cacheable. This layout sends the same sections, cleaned,
deduplicated and budgeted exactly as before, in another order:

1. one system message that every turn of the group shares, whoever asks: the **stable**
   sections — guard, persona, self identity (and what is anchored to them, such as constant
   worldbook entries), the reply-shape contract (the same until a turn asks for another
   shape) — then the **group timeline**, anchored so that it only grows from one turn to the
   next (`group_timeline.anchored_window`: from a content-defined chunk boundary, one to two
   widths of lines);
2. the member's session history (summary, rows, placed injections);
3. one system message with the **per-turn** sections: group expression, behaviour reference,
   memory, knowledge, relationship, person facts, old topics, turn policy, time, tool context
   (and keyed worldbook entries);
4. the ambient excerpt, timeline images, attachments and the current message.

A request thus repeats the previous request of the group (any member) up to the end of that
request's timeline: the cached share is the head plus the timeline lines both have seen.

An endpoint that takes one leading system message only gets block 3 folded into the next
user message by the client (`providers.wire.shape_messages`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pallas.context.chat_prompt import SECTION_SEPARATOR, ChatPromptAssembler
from pallas.context.pipeline import AMBIENT, HISTORY, SUMMARY, DraftMessage, PromptDraft
from pallas.context.rule_processors import INJECTION
from pallas.context.sections import GROUP_TIMELINE, GUARD, PERSONA, REPLY_SHAPE, SELF_IDENTITY

# the shared head, in this order: the stable sections, then the append-only timeline
STABLE_SECTION_IDS = frozenset({GUARD, PERSONA, SELF_IDENTITY, REPLY_SHAPE})
HEAD_ORDER = (GUARD, PERSONA, SELF_IDENTITY, REPLY_SHAPE, GROUP_TIMELINE)
# anchored sections that change from turn to turn although their anchor does not
PER_TURN_ANCHORED = frozenset({"worldbook_keyed"})
_PREFIX_KINDS = frozenset({SUMMARY, HISTORY, INJECTION})


def is_stable_section(section_id: str) -> bool:
    """Whether a section is the same from turn to turn (the head's first part). Unknown
    (plugin) sections are not: a wrong guess there would only cost cache hits."""
    anchor, at, placed = section_id.partition("@")
    if at:
        return anchor in STABLE_SECTION_IDS and placed.partition(":")[2] not in PER_TURN_ANCHORED
    return section_id in STABLE_SECTION_IDS


def in_head(section_id: str) -> bool:
    """Stable sections and the append-only group timeline: the shared system head."""
    return is_stable_section(section_id) or section_id == GROUP_TIMELINE


def _head_rank(section_id: str) -> int:
    anchor = section_id.partition("@")[0]
    return HEAD_ORDER.index(anchor) if anchor in HEAD_ORDER else len(HEAD_ORDER)


@dataclass(frozen=True, slots=True)
class CacheLayout:
    messages: list[dict[str, Any]]
    pinned: frozenset[int]  # indices the formatter must not fold into the head
    trace: dict[str, Any]


def _split_messages(
    messages: Sequence[DraftMessage],
) -> tuple[list[DraftMessage], list[DraftMessage]]:
    """(the history run the cache can reuse, everything of this turn), ambient moved to the
    start of the turn's part."""
    ambient = [m for m in messages if m.kind == AMBIENT]
    rest = [m for m in messages if m.kind != AMBIENT]
    cut = next((i for i, m in enumerate(rest) if m.kind not in _PREFIX_KINDS), len(rest))
    return rest[:cut], [*ambient, *rest[cut:]]


def cache_layout(draft: PromptDraft, *, block_max_chars: int) -> CacheLayout:
    kept = ChatPromptAssembler(draft.sections, block_max_chars=block_max_chars).sections
    # sorted() is stable: anchored sections stay next to their anchor
    stable = sorted(
        (s for s in kept if in_head(s.section_id)), key=lambda s: _head_rank(s.section_id)
    )
    per_turn = [s for s in kept if not in_head(s.section_id)]
    history, turn = _split_messages(draft.messages)
    out: list[dict[str, Any]] = []
    pinned: set[int] = set()
    head = SECTION_SEPARATOR.join(s.text for s in stable)
    if head:
        out.append({"role": "system", "content": head})
    for message in history:
        if message.kind == INJECTION:
            pinned.add(len(out))
        out.append(message.to_openai())
    prefix_messages = len(out)
    prefix_chars = sum(len(str(m.get("content", ""))) for m in out)
    volatile = SECTION_SEPARATOR.join(s.text for s in per_turn)
    if volatile:
        pinned.add(len(out))
        out.append({"role": "system", "content": volatile})
    for message in turn:
        if message.kind == INJECTION:
            pinned.add(len(out))
        out.append(message.to_openai())
    trace = {
        "layout": "cache",
        "stable_sections": [s.section_id for s in stable],  # the head (timeline last)
        "per_turn_sections": [s.section_id for s in per_turn],
        "prefix_messages": prefix_messages,
        "prefix_chars": prefix_chars,
        "history_messages": len(history),
    }
    return CacheLayout(out, frozenset(pinned), trace)
