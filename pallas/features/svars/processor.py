"""The session-variable processor (`svars`, priority 500, optional).

- member text (user messages and every non-admin section) gets `<svar` rewritten to `〈svar`,
  so a member cannot smuggle an op through the model's echo;
- `$[svars::table|list|<name>]` render in admin-authored text only (persona, self identity,
  prompt overrides, and messages an override placed);
- a 【会话变量】 section tells the model the current values and the tag syntax.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pallas.context import sections as S
from pallas.context.pipeline import BaseProcessor, PromptDraft, PromptSection
from pallas.features.svars.ops import neutralise_member_tags
from pallas.features.svars.render import (
    HEADER_SVARS,
    SvarView,
    render_placeholders,
    render_state_section,
)

SVARS_SECTION = "session_variables"
ADMIN_SECTION_IDS = frozenset({S.PERSONA, S.SELF_IDENTITY})


def is_admin_text(section_id: str, source: str) -> bool:
    """Persona / self identity / sections a prompt override replaced, created or appended to."""
    return section_id in ADMIN_SECTION_IDS or "override" in source


def is_admin_message(source: str) -> bool:
    """A message an admin's prompt override placed in the sequence (depth / anchor injection)."""
    return source.startswith(("override", "prompt_override"))


def is_only_admin_text(section_id: str, source: str) -> bool:
    """No member-derived text at all (an appended-to section still holds its own content)."""
    return section_id in ADMIN_SECTION_IDS or source.startswith("override:")


class VariableProcessor(BaseProcessor):
    id, priority = "svars", 500

    async def process(self, draft: PromptDraft, ctx: Any) -> PromptDraft:
        view: SvarView | None = getattr(ctx, "svars", None)
        used: list[str] = []
        sections: list[PromptSection] = []
        for section in draft.sections:
            text = section.text
            if not is_only_admin_text(section.section_id, section.source):
                text = neutralise_member_tags(text)
            if view is not None and is_admin_text(section.section_id, section.source):
                text, names = render_placeholders(text, view)
                used += names
            sections.append(replace(section, text=text) if text != section.text else section)
        messages = []
        for message in draft.messages:
            admin = is_admin_message(message.source)
            if admin and view is not None and isinstance(message.content, str):
                text, names = render_placeholders(message.content, view)
                used += names
                message = replace(message, content=text)
            elif message.role == "user" and isinstance(message.content, str):
                text = neutralise_member_tags(message.content)
                message = message if text == message.content else replace(message, content=text)
            messages.append(message)
        out = draft.with_sections(sections).with_messages(messages)
        if view is None:
            return out
        if view.config.state_section and (text := render_state_section(view)):
            out = out.put_section(
                PromptSection(SVARS_SECTION, text, source="svars", headers=(HEADER_SVARS,))
            )
        trace = {
            "values": {f"{m}:{n}": v for (m, n), v in view.values.items()},
            "rendered": used,
        }
        return out.with_meta(**{"trace.svars": trace})
