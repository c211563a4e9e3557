"""The session-variable processor (`svars`, priority 500, optional).

- member text (user messages and every non-admin section) gets `<svar` rewritten to `〈svar`,
  so a member cannot smuggle an op through the model's echo;
- `$[svars::table|list|<name>]` render in admin-authored text only (persona, self identity,
  prompt overrides, and messages an override placed);
- a 【会话变量】 section tells the model the current values and the tag syntax.
"""

from __future__ import annotations

from dataclasses import replace

from pallas.context.authorship import is_admin_message, is_admin_text, is_only_admin_text
from pallas.context.pipeline import DraftMessage, PromptDraft, PromptSection
from pallas.context.processor_inputs import ChatProcessor, ChatTurnContext
from pallas.context.prompt_guard import neutralise_member_tags
from pallas.features.svars.render import HEADER_SVARS

SVARS_SECTION = "session_variables"


class VariableProcessor(ChatProcessor):
    id, priority = "svars", 500

    async def process(self, draft: PromptDraft, ctx: ChatTurnContext) -> PromptDraft:
        view = ctx.svars
        used: list[str] = []
        sections: list[PromptSection] = []
        for section in draft.sections:
            text = section.text
            if not is_only_admin_text(section.section_id, section.source):
                text = neutralise_member_tags(text)
            if view is not None and is_admin_text(section.section_id, section.source):
                text, names = view.render_placeholders(text)
                used += names
            sections.append(replace(section, text=text) if text != section.text else section)
        messages: list[DraftMessage] = []
        for message in draft.messages:
            admin = is_admin_message(message.source)
            if admin and view is not None and isinstance(message.content, str):
                text, names = view.render_placeholders(message.content)
                used += names
                message = replace(message, content=text)
            elif message.role == "user" and isinstance(message.content, str):
                text = neutralise_member_tags(message.content)
                message = message if text == message.content else replace(message, content=text)
            messages.append(message)
        out = draft.with_sections(sections).with_messages(messages)
        if view is None:
            return out
        if text := view.state_section():
            out = out.put_section(
                PromptSection(SVARS_SECTION, text, source="svars", headers=(HEADER_SVARS,))
            )
        trace = {"values": view.trace_values(), "rendered": used}
        return out.with_meta(**{"trace.svars": trace})
