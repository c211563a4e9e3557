"""Pipeline processors for regex rules, worldbook placement, macros and placed injections.

They run after the session messages are loaded (300), in this default order (all optional,
reorderable per group):

    regex 305       request-stage rules over the messages (after they exist, before the
                    worldbook placement and the injections, so those are not rewritten;
                    move it after `injections` to clean injected text as well)
    worldbook 330   activated entries to their position: before / after the persona text or
                    at their depth in the messages (activation itself runs with retrieval and
                    scans the group timeline with the request-stage rules applied)
    macros 390      `{{…}}` in the persona pack's sections
    injections 410  placed prompt overrides (`[[context_rules.injections]]`) and the
                    `{{tools}}` fallback bookkeeping

Everything they did is recorded in `draft.meta["rules"]` (the injection snapshot and
`pallas context` print it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from pallas.context import sections as S
from pallas.context.depth_spec import insert_at_depths, parse_depth
from pallas.context.macros import expand_macros
from pallas.context.pipeline import DraftMessage, PromptDraft, PromptSection
from pallas.context.processor_inputs import ChatProcessor, ChatTurnContext
from pallas.context.prompt_guard import INJECTION_WARNING, sanitize_prompt_block
from pallas.context.prompt_overrides import PromptOverride
from pallas.context.regex_rules import apply_rules
from pallas.context.rules_config import InjectionConfig, TurnRules

INJECTION = "injection"  # DraftMessage.kind of placed messages (never trimmed, never merged)
WORLDBOOK_BLOCK = "worldbook"  # ctx.blocks key the knowledge source fills
_USER_PREFIX_START = "【用户消息 — 非 system 指令"
# persona-pack sections the macro pass expands (exact sources: never override / data text)
MACRO_SOURCES = frozenset({"persona_pack.base", "persona_pack.self_identity"})


def _rules(ctx: ChatTurnContext) -> TurnRules | None:
    return ctx.rules


def _record(draft: PromptDraft, key: str, value: Any) -> PromptDraft:
    rules = dict(draft.meta.get("rules") or {})
    rules[key] = value
    if key == "macros":  # what later processors read is the typed field, the trace is for people
        draft = replace(draft, macros_used=frozenset(value.get("used", ())))
    return draft.with_meta(rules=rules)


def anchored_id(anchor: str, side: str, name: str) -> str:
    """A section id placed before / after `anchor` (see `sections.section_rank`)."""
    return f"{anchor}@{side}:{name}"


# ------------------------------------------------------------------------------ regex


def _split_wrapped(text: str) -> tuple[str, str, str]:
    """(prefix line, body, warning line) of a wrapped user message; plain text → ("", t, "")."""
    head = tail = ""
    lines = text.split("\n")
    if lines and lines[0].startswith(_USER_PREFIX_START):
        head, lines = lines[0] + "\n", lines[1:]
    if len(lines) > 1 and lines[-1] == INJECTION_WARNING:
        tail, lines = "\n" + lines[-1], lines[:-1]
    return head, "\n".join(lines), tail


class RegexProcessor(ChatProcessor):
    id, priority = "regex", 305

    async def process(self, draft: PromptDraft, ctx: ChatTurnContext) -> PromptDraft:
        rules = _rules(ctx)
        active = rules.regex.for_stage("request") if rules else ()
        if not rules or not active:
            return draft
        out: list[DraftMessage] = []
        trace: list[dict[str, Any]] = []
        total = len(draft.messages)
        for index, message in enumerate(draft.messages):
            depth = total - 1 - index
            if message.has_blocks:  # image blocks (the timeline images message)
                out.append(message)
                continue
            head, body, tail = _split_wrapped(message.text)
            new, hits = apply_rules(
                body,
                active,
                role=message.role,
                depth=depth,
                env=rules.macros,
                timeout_ms=rules.regex.timeout_ms,
            )
            for hit in hits:
                trace.append(
                    {"rule": hit.rule, "depth": depth, "count": hit.count, "timeout": hit.timed_out}
                )
            out.append(replace(message, content=f"{head}{new}{tail}") if new != body else message)
        draft = draft.with_messages(out)
        return _record(draft, "regex", trace) if trace else draft


# ------------------------------------------------------------------------------ worldbook


def _entry_text(
    content: str, ctx: ChatTurnContext, cap: int
) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """Sanitised entry text (macros expanded, never cut), macros used, unknown macros."""
    rules = _rules(ctx)
    used: tuple[str, ...] = ()
    unknown: tuple[str, ...] = ()
    if rules is not None and rules.macros is not None:
        expansion = expand_macros(content, rules.macros)
        content, used, unknown = expansion.text, expansion.used, expansion.unknown
    return sanitize_prompt_block(content, max_chars=max(cap, len(content) * 2)), used, unknown


class WorldbookProcessor(ChatProcessor):
    """Activated entries (from `ctx.blocks["worldbook"].items`) to their positions.

    Whole entries only: an entry that would push its position's block over the section cap
    (`block_max_chars`) is dropped whole and listed in `meta["rules"]["worldbook_dropped"]`.
    Placed blocks are protected from the context budget (the worldbook's own token budget
    already decided which whole entries fit).
    """

    id, priority = "worldbook", 330

    async def process(self, draft: PromptDraft, ctx: ChatTurnContext) -> PromptDraft:
        block = ctx.blocks.get(WORLDBOOK_BLOCK)
        activated = block.items if block is not None else ()
        if not activated:
            return draft
        cap = ctx.config.block_max_chars
        # constant entries apart from keyed / sticky ones: the cache-aware layout keeps the
        # former in the stable head and sends the latter with this turn's blocks
        groups: dict[tuple[str, str], list[tuple[str, str]]] = {}
        placements: list[tuple[int, DraftMessage]] = []
        placed: list[dict[str, Any]] = []
        dropped: list[dict[str, Any]] = []
        used: list[str] = []
        unknown: list[str] = []
        for act in activated:
            entry = act.entry
            text, entry_used, entry_unknown = _entry_text(entry.content, ctx, cap)
            used.extend(entry_used)
            unknown.extend(entry_unknown)
            if not text:
                continue
            position = str(act.position)  # the slice's StrEnum: str() is its value
            if position == "at_depth":
                message = DraftMessage(
                    entry.role, text, "worldbook", entry.source_token, INJECTION, protected=True
                )
                placements.append((entry.depth, message))
                placed.append({"id": act.key_id, "position": f"depth {entry.depth}"})
                continue
            side = "before" if position == "before_persona" else "after"
            taken = sum(len(t) + 1 for g, items in groups.items() if g[0] == side for t, _ in items)
            if taken + len(text) > cap:
                dropped.append({"id": act.key_id, "reason": f"over the {cap}-char block cap"})
                continue
            name = "worldbook" if act.reason == "constant" else "worldbook_keyed"
            groups.setdefault((side, name), []).append((text, entry.source_token))
            placed.append({"id": act.key_id, "position": f"{side}_char"})
        for (side, name), items in groups.items():
            tokens = tuple(token for _, token in items)
            draft = draft.put_section(
                PromptSection(
                    anchored_id(S.PERSONA, side, name),
                    "\n".join(text for text, _ in items),
                    source="worldbook",
                    source_tokens=tokens,
                    memory_ids=tokens,
                    protected=True,
                )
            )
        if placements:
            draft = draft.with_messages(insert_at_depths(draft.messages, placements))
        draft = _record(draft, "worldbook", placed)
        if used or unknown:
            draft = _record(draft, "macros", _macro_trace(draft, used, unknown))
        return _record(draft, "worldbook_dropped", dropped) if dropped else draft


# ------------------------------------------------------------------------------ macros


class MacroProcessor(ChatProcessor):
    """Expands `{{…}}` in the persona pack's own sections (single pass)."""

    id, priority = "macros", 390

    async def process(self, draft: PromptDraft, ctx: ChatTurnContext) -> PromptDraft:
        rules = _rules(ctx)
        if rules is None or rules.macros is None:
            return draft
        used: list[str] = []
        unknown: list[str] = []
        sections = []
        for section in draft.sections:
            if section.source in MACRO_SOURCES and "{{" in section.text:
                expansion = expand_macros(section.text, rules.macros)
                used.extend(expansion.used)
                unknown.extend(expansion.unknown)
                section = replace(section, text=expansion.text)
            sections.append(section)
        if not used and not unknown:
            return draft
        draft = draft.with_sections(sections)
        return _record(draft, "macros", _macro_trace(draft, used, unknown))


def _macro_trace(draft: PromptDraft, used: list[str], unknown: list[str]) -> dict[str, Any]:
    before: Mapping[str, Any] = (draft.meta.get("rules") or {}).get("macros") or {}
    return {
        "used": list(dict.fromkeys([*before.get("used", []), *used])),
        "unknown": list(dict.fromkeys([*before.get("unknown", []), *unknown])),
    }


def expand_override_macros(
    overrides: Sequence[PromptOverride], ctx: ChatTurnContext
) -> tuple[PromptOverride, ...]:
    """`[[context.prompt_overrides]]` texts with their macros expanded (single pass)."""
    rules = _rules(ctx)
    if rules is None or rules.macros is None:
        return tuple(overrides)
    env = rules.macros
    return tuple(replace(o, text=expand_macros(o.text, env).text) for o in overrides)


# ------------------------------------------------------------------------------ injections


def _injection_text(
    item: InjectionConfig, ctx: ChatTurnContext
) -> tuple[str, tuple[str, ...], bool]:
    rules = _rules(ctx)
    if rules is None or rules.macros is None:
        return item.text.strip(), (), False
    expansion = expand_macros(item.text, rules.macros)
    return expansion.text.strip(), expansion.used, expansion.tools_used


class InjectionProcessor(ChatProcessor):
    """Placed prompt overrides, then the `{{tools}}` fallback.

    When the tool context was expanded through `{{tools}}` anywhere (persona, injections), the
    separate 【工具上下文】 section is dropped; otherwise it stays, so results are never lost.
    """

    id, priority = "injections", 410

    async def process(self, draft: PromptDraft, ctx: ChatTurnContext) -> PromptDraft:
        rules = _rules(ctx)
        if rules is None:
            return draft
        placements: list[tuple[int, DraftMessage]] = []
        placed: list[dict[str, Any]] = []
        used: list[str] = []
        for item in rules.injections:
            text, item_used, _ = _injection_text(item, ctx)
            used.extend(item_used)
            # "override:…": placed prompt overrides are admin text (kb placeholders, svars)
            source = f"override:injection:{item.name}"
            if item.position == "depth":
                depths = parse_depth(item.depth).resolve(len(draft.messages))
                for depth in depths:
                    message = DraftMessage(
                        item.role, text, source, source, INJECTION, protected=True
                    )
                    placements.append((depth, message))
                placed.append({"name": item.name, "position": f"depth {list(depths)}"})
                continue
            anchor, side = _anchor(item)
            section = PromptSection(
                anchored_id(anchor, side, item.name),
                text,
                source=source,
                source_tokens=(source,),
                protected=True,
                headers=(),
            )
            draft = draft.put_section(section)
            placed.append({"name": item.name, "position": f"{side} {anchor}"})
        if placements:
            draft = draft.with_messages(insert_at_depths(draft.messages, placements))
        if placed:
            draft = _record(draft, "injections", placed)
        if used:
            draft = _record(draft, "macros", _macro_trace(draft, used, []))
        return _tools_fallback(draft, "tools" in draft.macros_used)


def _anchor(item: InjectionConfig) -> tuple[str, str]:
    if item.position == "before_char":
        return S.PERSONA, "before"
    if item.position == "after_char":
        return S.PERSONA, "after"
    return item.anchor, "before" if item.position == "before_section" else "after"


def _tools_fallback(draft: PromptDraft, tools_expanded: bool) -> PromptDraft:
    if tools_expanded and draft.get_section(S.TOOL_CONTEXT) is not None:
        draft = draft.without_section(S.TOOL_CONTEXT)
        return _record(draft, "tools", "expanded via {{tools}}; 【工具上下文】 section dropped")
    if draft.get_section(S.TOOL_CONTEXT) is not None:
        return _record(draft, "tools", "no {{tools}} macro: 【工具上下文】 section kept")
    return draft


def rule_processors() -> list[ChatProcessor]:
    return [RegexProcessor(), WorldbookProcessor(), MacroProcessor(), InjectionProcessor()]
