"""The limiter: fit system prompt + messages into a char budget and a real-BPE token budget.

Runs after everything that adds text: the limiter must see the final content to count it.
Both limits must hold: `char_budget` (default 12,000 chars over system prompt + messages) and
`token_budget` (the model's context window minus reserved output, cl100k_base tokens).

Trim order (first given up first):

1. session history rows, oldest first (the pinned summary is not a history row);
2. any other unprotected message (hints, plugin messages), oldest first;
3. the 【群环境摘录】 ambient excerpt;
4. the timeline-images message;
5. the 【此前对话摘要】 summary;
6. system sections: plugin sections, then `SYSTEM_TRIM_ORDER` (old topics → person facts →
   relationship → knowledge → memory → behaviour reference → group expression → tool
   context → group timeline).

Never trimmed: the guard, persona, self identity, reply-shape contract, turn policy, current
time, the current message and anything flagged `protected`. The item that crosses the line is
kept partially when at least `partial_keep_min_chars` of it fit: its head with `…(已截断)`
(the group timeline instead keeps its header and newest lines).

Speed: every section/message is measured once (token counts are LRU-cached); removals only
subtract. One exact count of the final request at the end guards against the small error of
summing per-part counts; if it is still over, the loop runs again with the exact numbers.
Sections and the whole system prompt are counted with `count` (the reply path hands in its
`PieceTokenCounter`: the same exact numbers, from cached counts of the prompt's lines).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from pallas.context.budget_report import BudgetReport, TrimRecord
from pallas.context.chat_prompt import SECTION_SEPARATOR, ChatPromptAssembler
from pallas.context.pipeline import (
    AMBIENT,
    HISTORY,
    SUMMARY,
    TIMELINE_IMAGES,
    DraftMessage,
    PromptDraft,
    PromptSection,
)
from pallas.context.prompt_guard import DEFAULT_BLOCK_MAX_CHARS
from pallas.context.sections import (
    BUDGET_KEPT_SECTION_IDS,
    GROUP_TIMELINE,
    SECTION_IDS,
    SYSTEM_TRIM_ORDER,
)
from pallas.core.tokens import (
    REPLY_PRIMING_TOKENS,
    TOKENS_PER_MESSAGE,
    content_tokens,
    count_tokens,
)

TRUNCATION_MARKER = "…(已截断)"
_SYSTEM_OVERHEAD = TOKENS_PER_MESSAGE + 1  # per-message overhead + the "system" role token
_SEPARATOR_TOKENS = 1
Count = Callable[[str], int]  # exact cl100k tokens of a text


@dataclass(frozen=True, slots=True)
class ModelTokenBudget:
    """Per-model limits: the prompt may use the context window minus the reserved output."""

    context_window: int
    reserved_output: int = 1024

    @property
    def limit(self) -> int:
        return max(self.context_window - self.reserved_output, 0)


@dataclass(frozen=True, slots=True)
class BudgetResult:
    draft: PromptDraft
    report: BudgetReport
    system_prompt: str = ""


@dataclass(slots=True)
class _Item:
    target: str
    index: int
    item_id: str
    kind: str
    text: str
    chars: int
    tokens: int  # text tokens + overhead
    overhead: int = 0  # tokens that are not the text (message wrapper, role)
    text_only: bool = True
    removed: bool = False
    truncated: bool = False


@dataclass(slots=True)
class _Totals:
    chars: int
    tokens: int
    trims: list[TrimRecord] = field(default_factory=list)


def _section_items(sections: Sequence[PromptSection], count: Count) -> list[_Item]:
    return [
        _Item("section", i, s.section_id, s.section_id, s.text, len(s.text), count(s.text))
        for i, s in enumerate(sections)
    ]


def _message_items(messages: Sequence[DraftMessage]) -> list[_Item]:
    items = []
    for i, m in enumerate(messages):
        overhead = TOKENS_PER_MESSAGE + count_tokens(m.role)
        tokens = overhead + content_tokens(m.content)
        item_id = m.source_token or f"{m.kind}#{i}"
        text = m.text
        items.append(
            _Item(
                "message", i, item_id, m.kind, text, len(text), tokens, overhead, not m.has_blocks
            )
        )
    return items


def _system_cost(items: list[_Item]) -> tuple[int, int]:
    live = [it for it in items if not it.removed]
    if not live:
        return 0, 0
    seps = len(live) - 1
    chars = sum(it.chars for it in live) + seps * len(SECTION_SEPARATOR)
    tokens = sum(it.tokens for it in live) + seps * _SEPARATOR_TOKENS + _SYSTEM_OVERHEAD
    return chars, tokens


def _candidates(
    sections: Sequence[PromptSection],
    messages: Sequence[DraftMessage],
    sec_items: list[_Item],
    msg_items: list[_Item],
) -> list[_Item]:
    def msgs(pred) -> list[_Item]:  # type: ignore[no-untyped-def]
        return [msg_items[i] for i, m in enumerate(messages) if not m.protected and pred(m)]

    fixed_kinds = {HISTORY, AMBIENT, TIMELINE_IMAGES, SUMMARY}
    order = msgs(lambda m: m.kind == HISTORY)
    order += msgs(lambda m: m.kind not in fixed_kinds)
    order += msgs(lambda m: m.kind == AMBIENT)
    order += msgs(lambda m: m.kind == TIMELINE_IMAGES)
    order += msgs(lambda m: m.kind == SUMMARY)
    trimmable = [
        i
        for i, s in enumerate(sections)
        if not s.protected and s.section_id not in BUDGET_KEPT_SECTION_IDS
    ]
    order += [sec_items[i] for i in trimmable if sections[i].section_id not in SECTION_IDS]
    for section_id in SYSTEM_TRIM_ORDER:
        order += [sec_items[i] for i in trimmable if sections[i].section_id == section_id]
    return order


def _keep_floor(text: str, min_keep: int) -> int:
    """Minimum head length worth keeping: a leading 【…】 header line does not count."""
    if text.startswith("【") and "\n" in text:
        return text.index("\n") + 1 + min_keep
    return min_keep


def _shrink(item: _Item, max_chars: int, max_tokens: int, min_keep: int) -> str | None:
    """The longest kept form of `item.text` within both limits, or None when too little fits."""
    text = item.text.removesuffix(TRUNCATION_MARKER) if item.truncated else item.text
    if item.kind == GROUP_TIMELINE and "\n" in text:
        header, *lines = text.split("\n")
        for start in range(1, len(lines)):
            candidate = "\n".join([header, *lines[start:]])
            if len(candidate) <= max_chars and count_tokens(candidate) <= max_tokens:
                return candidate
        return None
    floor = _keep_floor(text, min_keep)
    lo, hi, best = floor, min(len(text) - 1, max_chars - len(TRUNCATION_MARKER)), None
    while lo <= hi:
        mid = (lo + hi) // 2
        candidate = text[:mid].rstrip() + TRUNCATION_MARKER
        if len(candidate) <= max_chars and count_tokens(candidate) <= max_tokens:
            best, lo = candidate, mid + 1
        else:
            hi = mid - 1
    return best


def _trim(
    candidates: list[_Item],
    totals: _Totals,
    sec_items: list[_Item],
    limits: tuple[int, int | None],
    min_keep: int,
) -> None:
    char_limit, token_limit = limits
    for item in candidates:
        over_c = totals.chars - char_limit
        over_t = totals.tokens - token_limit if token_limit is not None else 0
        if over_c <= 0 and over_t <= 0:
            return
        if item.removed:
            continue
        reason = "+".join(
            name for name, over in (("char_budget", over_c), ("token_budget", over_t)) if over > 0
        )
        kept = None
        if item.text_only and item.text:
            max_c = item.chars - max(over_c, 0)
            max_t = item.tokens - item.overhead - max(over_t, 0)
            kept = _shrink(item, max_c, max_t, min_keep)
        if kept is not None:
            new_tokens = item.overhead + count_tokens(kept)
            d_chars, d_tokens = item.chars - len(kept), item.tokens - new_tokens
            item.text, item.chars, item.tokens, item.truncated = kept, len(kept), new_tokens, True
            action = "truncated"
        else:
            d_chars, d_tokens = _removal_cost(item, sec_items)
            item.removed = True
            action = "dropped"
        totals.chars -= d_chars
        totals.tokens -= d_tokens
        totals.trims.append(
            TrimRecord(item.target, item.item_id, item.kind, action, d_chars, d_tokens, reason)
        )


def _removal_cost(item: _Item, sec_items: list[_Item]) -> tuple[int, int]:
    if item.target == "message":
        return item.chars, item.tokens
    before = _system_cost(sec_items)
    item.removed = True
    after = _system_cost(sec_items)
    item.removed = False
    return before[0] - after[0], before[1] - after[1]


def _rebuild(
    sections: Sequence[PromptSection],
    messages: Sequence[DraftMessage],
    sec_items: list[_Item],
    msg_items: list[_Item],
) -> tuple[list[PromptSection], list[DraftMessage]]:
    new_sections = [
        replace(s, text=it.text) if it.truncated else s
        for s, it in zip(sections, sec_items, strict=True)
        if not it.removed
    ]
    new_messages = [
        replace(m, content=it.text) if it.truncated else m
        for m, it in zip(messages, msg_items, strict=True)
        if not it.removed
    ]
    return new_sections, new_messages


def _exact(system: str, msg_items: Sequence[_Item], count: Count) -> tuple[int, int]:
    """Chars and `count_message_tokens` of the request: the system message (counted whole,
    exactly) + the kept messages (each item's tokens are its role, content and wrapper, as
    `count_message_tokens` counts a `to_openai()` message; a truncated item was re-measured)."""
    live = [it for it in msg_items if not it.removed]
    tokens = REPLY_PRIMING_TOKENS + sum(it.tokens for it in live)
    if system:
        tokens += TOKENS_PER_MESSAGE + count_tokens("system") + count(system)
    return len(system) + sum(it.chars for it in live), tokens


def apply_budget(
    draft: PromptDraft,
    *,
    char_budget: int = 12000,
    token_budget: int | None = None,
    partial_keep_min_chars: int = 24,
    block_max_chars: int = DEFAULT_BLOCK_MAX_CHARS,
    count: Count | None = None,
) -> BudgetResult:
    """Trim `draft` to both budgets; the result's sections are the sanitised, kept ones.

    `count` gives a text's exact token count (default: the process-wide LRU of `tokens.py`).
    """
    started = time.perf_counter()
    count = count or count_tokens
    assembler = ChatPromptAssembler(draft.sections, block_max_chars=block_max_chars)
    sections = list(assembler.sections)
    messages = list(draft.messages)
    sec_items, msg_items = _section_items(sections, count), _message_items(messages)
    chars_before, tokens_before = _exact(assembler.build(), msg_items, count)
    candidates = _candidates(sections, messages, sec_items, msg_items)
    sys_c, sys_t = _system_cost(sec_items)
    msg_c = sum(it.chars for it in msg_items)
    msg_t = sum(it.tokens for it in msg_items)
    totals = _Totals(sys_c + msg_c, sys_t + msg_t + REPLY_PRIMING_TOKENS)
    limit = token_budget
    for _ in range(4):
        _trim(candidates, totals, sec_items, (char_budget, limit), partial_keep_min_chars)
        new_sections, new_messages = _rebuild(sections, messages, sec_items, msg_items)
        system = SECTION_SEPARATOR.join(s.text for s in new_sections)
        chars_after, tokens_after = _exact(system, msg_items, count)
        if token_budget is None or tokens_after <= token_budget:
            break
        # the per-part estimate was optimistic: continue from the exact numbers
        totals.chars, totals.tokens = chars_after, tokens_after
    over = chars_after > char_budget or (token_budget is not None and tokens_after > token_budget)
    report = BudgetReport(
        char_budget=char_budget,
        token_budget=token_budget,
        chars_before=chars_before,
        chars_after=chars_after,
        tokens_before=tokens_before,
        tokens_after=tokens_after,
        trims=tuple(totals.trims),
        over_budget=over,
        elapsed_ms=(time.perf_counter() - started) * 1000,
    )
    new_draft = draft.with_sections(new_sections).with_messages(new_messages)
    return BudgetResult(replace(new_draft, budget_report=report), report, system)
