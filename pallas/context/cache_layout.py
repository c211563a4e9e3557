"""The request laid out for providers' prefix caches (`[context] prompt_layout = "cache"`).

Providers bill the longest prefix a request shares with a recent one at a fraction of the
price (DeepSeek in 64-token units, OpenAI from 1,024 tokens, Qwen, Kimi, GLM alike). The
spec's layout puts every section in one system message, so the first byte that changes (the
group timeline, the retrieval blocks, the time) sits early and nothing after it — the whole
session history included — is ever cacheable. This layout sends the same sections, cleaned,
deduplicated and budgeted exactly as before, in another order:

1. one system message with the **stable** sections: guard, persona, self identity (and what
   is anchored to them, such as constant worldbook entries): the same for every turn of a
   group, whoever asks;
2. the member's session history (summary, rows, placed injections), append-only between two
   of their turns;
3. one system message with the **per-turn** sections: group expression, behaviour reference,
   memory, knowledge, relationship, person facts, old topics, group timeline, reply shape,
   turn policy, time, tool context (and keyed worldbook entries);
4. the ambient excerpt, timeline images, attachments and the current message.

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
from pallas.context.sections import GUARD, PERSONA, SELF_IDENTITY

STABLE_SECTION_IDS = frozenset({GUARD, PERSONA, SELF_IDENTITY})
# anchored sections that change from turn to turn although their anchor does not
PER_TURN_ANCHORED = frozenset({"worldbook_keyed"})
_PREFIX_KINDS = frozenset({SUMMARY, HISTORY, INJECTION})


def is_stable_section(section_id: str) -> bool:
    """Whether a section belongs to the cacheable system head. Unknown (plugin) sections do
    not: a wrong guess there would only cost cache hits, never an answer."""
    anchor, at, placed = section_id.partition("@")
    if at:
        return anchor in STABLE_SECTION_IDS and placed.partition(":")[2] not in PER_TURN_ANCHORED
    return section_id in STABLE_SECTION_IDS


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
    stable = [s for s in kept if is_stable_section(s.section_id)]
    per_turn = [s for s in kept if not is_stable_section(s.section_id)]
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
        "stable_sections": [s.section_id for s in stable],
        "per_turn_sections": [s.section_id for s in per_turn],
        "prefix_messages": prefix_messages,
        "prefix_chars": prefix_chars,
        "history_messages": len(history),
    }
    return CacheLayout(out, frozenset(pinned), trace)
