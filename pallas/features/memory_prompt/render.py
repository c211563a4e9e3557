"""Render retrieved memory rows and worldbook entries as prompt blocks (pure).

Every stored text is untrusted (members taught it, a model extracted it, an admin typed it):
each line goes through `prompt_guard`, so a fake `【…】` header or a role marker inside a memory
cannot become structure. Only the headers rendered here are declared to the assembler.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from pallas.context.processor_inputs import RetrievedBlock
from pallas.context.prompt_guard import sanitize_inline, sanitize_prompt_block
from pallas.features.memory import HEADERS, PERSON_FACTS, RELATIONSHIP, MemoryItem, classify_fact
from pallas.features.worldbook import ActivatedEntry

LINE_MAX_CHARS = 240
ENTRY_MAX_CHARS = 1200


@dataclass(frozen=True, slots=True)
class KindBlock:
    """One kind's chosen rows (best first), ready to render under the kind's header."""

    kind: str
    items: tuple[MemoryItem, ...]


def item_line(item: MemoryItem) -> str:
    """`- text` (+ a provenance hint the model can weigh), sanitised to one line.

    Facts and relationship notes about a member are quoted data (`- 「TA喜欢猫」`): a row that
    reads as a rule for the bot (stored before `fact_guard` existed, or slipped past it) is left
    out rather than shown; admin rows are trusted. A pure function of the row's text, kind and
    origin, remembered (bounded): the rows chosen turn after turn are rendered once.
    """
    return _line(item.text, item.kind, item.origin)


@lru_cache(maxsize=4096)
def _line(raw: str, kind: str, origin: str) -> str:
    text = sanitize_inline(raw, LINE_MAX_CHARS)
    if not text:
        return ""
    if kind not in (PERSON_FACTS, RELATIONSHIP):
        return f"- {text}"
    if origin != "admin" and not classify_fact(text).allowed:
        return ""
    quoted = "「" + text.replace("「", "『").replace("」", "』") + "」"
    if origin == "teach":
        quoted += "（本人亲口说的）"
    return f"- {quoted}"


def worldbook_lines(activated: Sequence[ActivatedEntry]) -> list[str]:
    """Activated entries, before-persona ones first, continuation lines indented."""
    order = {"before_persona": 0, "after_persona": 1, "at_depth": 2}
    ranked = sorted(activated, key=lambda a: order.get(a.position.value, 1))
    lines: list[str] = []
    for act in ranked:
        body = sanitize_prompt_block(act.entry.content, ENTRY_MAX_CHARS)
        if not body:
            continue
        first, *rest = body.split("\n")
        lines.append(f"- {first}")
        lines.extend(f"  {line}" for line in rest if line.strip())
    return lines


def build_block(
    blocks: Sequence[KindBlock],
    *,
    source: str,
    extra: Mapping[str, tuple[list[str], tuple[str, ...]]] | None = None,
) -> RetrievedBlock | None:
    """Join kind blocks (and extra pre-rendered lines per kind: worldbook entries) into one.

    `extra` maps a kind to (lines, provenance tokens) appended under that kind's header; the
    tokens (``worldbook:<book>#<uid>``) join both `memory_ids` and `source_tokens`.
    """
    parts: list[str] = []
    headers: list[str] = []
    ids: list[str] = []
    tokens: list[str] = []
    extra = dict(extra or {})
    for block in blocks:
        lines = [line for line in (item_line(i) for i in block.items) if line]
        more, more_tokens = extra.pop(block.kind, ([], ()))
        if not lines and not more:
            continue
        header = HEADERS[block.kind]
        parts.append("\n".join([f"【{header}】", *lines, *more]))
        headers.append(header)
        ids.extend(i.ref for i in block.items)
        ids.extend(more_tokens)
        if block.items:
            tokens.append(f"memory:{block.kind}")
        tokens.extend(more_tokens)
    if not parts:
        return None
    return RetrievedBlock(
        text="\n\n".join(parts),
        source=source,
        memory_ids=tuple(ids),
        source_tokens=tuple(dict.fromkeys(tokens)),
        headers=tuple(headers),
    )
