"""The knowledge-placeholder processor (`kb_placeholders`, priority 450, optional).

Runs after the prompt overrides are in place: every `【kb…】` / `【knowledge…】` placeholder in
admin-authored text (persona, self identity, override sections and override-placed messages) is
replaced by snippets from its pool. Placeholders in member text are not honoured (the prompt
guard turns their brackets into 〔…〕 anyway). Without a lookup (no memory store) placeholders
render as the configured empty text, never as raw markup.

`expand_macros` is an optional hook, `(text, ctx) -> text`, for macros in the snippets: when
given, each rendered snippet block is passed through it before insertion (the default pipeline
passes none).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from pallas.context.authorship import is_admin_message, is_admin_text
from pallas.context.pipeline import PromptDraft
from pallas.context.processor_inputs import ChatProcessor, ChatTurnContext
from pallas.features.kb.lookup import MacroExpander
from pallas.features.kb.placeholders import PLACEHOLDER_RE

_KB_HEADER = re.compile(r"^(?:kb|knowledge)(?:::|$)", re.IGNORECASE)


class KnowledgePlaceholderProcessor(ChatProcessor):
    id, priority = "kb_placeholders", 450

    def __init__(self, expand_macros: MacroExpander | None = None) -> None:
        self.expand_macros = expand_macros

    async def _fills(
        self, texts: list[str], ctx: ChatTurnContext
    ) -> tuple[dict[str, str], list[Any]]:
        lookup = ctx.knowledge
        fills: dict[str, str] = {}
        traces: list[Any] = []
        for text in texts:
            for match in PLACEHOLDER_RE.finditer(text):
                raw = match.group(0)
                if lookup is None:
                    fills.setdefault(raw, "")
                    traces.append({"placeholder": raw, "activation": "no_lookup"})
                    continue
                resolved = await lookup.resolve(raw)
                traces.append(resolved.trace)
                value = resolved.text
                if self.expand_macros is not None and value:
                    value = self.expand_macros(value, ctx)
                fills[raw] = value
        return fills, traces

    async def process(self, draft: PromptDraft, ctx: ChatTurnContext) -> PromptDraft:
        admin_sections = [s for s in draft.sections if is_admin_text(s.section_id, s.source)]
        admin_messages = [
            m for m in draft.messages if is_admin_message(m.source) and isinstance(m.content, str)
        ]
        texts = [s.text for s in admin_sections] + [str(m.content) for m in admin_messages]
        if not any(PLACEHOLDER_RE.search(t) for t in texts):
            return draft
        fills, traces = await self._fills(texts, ctx)

        def sub(text: str) -> str:
            return PLACEHOLDER_RE.sub(lambda m: fills.get(m.group(0), m.group(0)), text)

        sections = [
            replace(
                s,
                text=sub(s.text),
                headers=tuple(h for h in s.headers if not _KB_HEADER.match(h)),
            )
            if s in admin_sections
            else s
            for s in draft.sections
        ]
        messages = [
            replace(m, content=sub(str(m.content))) if m in admin_messages else m
            for m in draft.messages
        ]
        out = draft.with_sections(sections).with_messages(messages)
        return out.with_meta(**{"trace.kb_placeholders": traces})
