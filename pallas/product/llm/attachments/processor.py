"""The attachment processor (spec processor 4, "转写与文本提取器", optional).

Attachments read before the pipeline (`ctx.attachments`: shared text files, voice transcripts
or the `[语音]` placeholder) go into the current user message, after its prefix line and before
the member's own words, so the token limiter counts them and can trim around them. File text is
member input: it goes through the same sanitiser as the message (headers and role markers
neutralised). Spec priority 250 is "after the session loader"; Pallas loads the messages at
300, so this runs at 310 (still before the token limiter at 600).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from pallas.product.llm.attachments.files import AttachmentText
from pallas.product.llm.context.pipeline import CURRENT, BaseProcessor, PromptDraft
from pallas.product.llm.persona.prompt_guard import sanitize_inline, sanitize_prompt_block

VOICE = "[语音]"


def render_attachment(item: AttachmentText, max_chars: int) -> str:
    name = sanitize_inline(item.name, 80) or "附件"
    if item.kind == "voice":
        if item.text:
            return f"[语音转写：{sanitize_inline(item.text, max_chars)}]"
        return VOICE
    if not item.text:
        return f"[文件《{name}》：没能读取]"
    body = sanitize_prompt_block(item.text, max_chars + 1)
    cut = "（文件较长，只读了开头）" if item.status == "truncated" else ""
    return f"[文件《{name}》内容{cut}]\n{body}\n[文件《{name}》结束]"


def attachment_block(items: Sequence[AttachmentText], max_chars: int) -> str:
    return "\n".join(render_attachment(i, max_chars) for i in items)


class AttachmentProcessor(BaseProcessor):
    id, priority = "attachments", 310

    async def process(self, draft: PromptDraft, ctx: Any) -> PromptDraft:
        items: Sequence[AttachmentText] = getattr(ctx, "attachments", ()) or ()
        if not items:
            return draft
        block = attachment_block(items, max(len(i.text) for i in items) + 1)
        messages = list(draft.messages)
        index = next((i for i, m in enumerate(messages) if m.kind == CURRENT), None)
        if index is None or not isinstance(messages[index].content, str):
            return draft.with_meta(**{"trace.attachments": {"skipped": "no_current_text"}})
        head, _, rest = str(messages[index].content).partition("\n")
        content = f"{head}\n{block}" + (f"\n{rest}" if rest else "")
        messages[index] = replace(messages[index], content=content)
        trace = {"items": [i.to_trace() for i in items]}
        return draft.with_messages(messages).with_meta(**{"trace.attachments": trace})
