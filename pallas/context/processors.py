"""The context layer's processors of the chat pipeline and the inputs they read.

The orchestrator gathers everything a REPLY turn needs (timeline rows, session rows, retrieved
blocks, turn policy, reply shape, tool results) into one frozen `ChatTurnContext`
(`processor_inputs.py`); processors only read it and add sections / messages to the draft.
Sections whose sources arrive in later work (memory, knowledge, relationship, …) are real
processors that render nothing without data. The feature slices' processors (attachments 310,
kb_placeholders 450, svars 500) are handed in by the turn (`pallas.turn.parts.chat_pipeline`): this
layer knows no feature.

Default order (priority): guard 100 · persona 110 · self_identity 120 · group_expression 130 ·
behavior_reference 140 · memory 150 · knowledge 160 · relationship 170 · person_facts 180 ·
mid_term 190 · group_timeline 200 · reply_shape 210 · turn_policy 220 · current_time 230 ·
tool_context 240 · session_messages 300 · regex 305 · attachments 310 · worldbook 330 ·
timeline_images 350 · macros 390 · prompt_overrides 400 · injections 410 · kb_placeholders
450 · svars 500 · budget 600 (fixed) · formatter 800 (fixed). Core: guard, persona,
reply_shape, session_messages, budget.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from pallas.context import sections as S
from pallas.context.budget import apply_budget
from pallas.context.cache_layout import cache_layout
from pallas.context.chat_prompt import (
    draft_request,
    render_current_time,
    render_reply_shape,
    render_self_identity,
    render_tool_context,
    render_turn_policy,
)
from pallas.context.config import ContextConfig
from pallas.context.group_timeline import (
    ambient_snapshot_from_timeline,
    build_recent_group_timeline,
)
from pallas.context.image_budget import image_budget
from pallas.context.pipeline import (
    TIMELINE_IMAGES,
    DraftMessage,
    PromptDraft,
    PromptSection,
)
from pallas.context.processor_inputs import ChatPipeline, ChatProcessor, ChatTurnContext
from pallas.context.prompt_guard import PROMPT_INJECTION_GUARD, find_headers
from pallas.context.prompt_overrides import apply_prompt_overrides, load_chat_prompt_overrides
from pallas.context.rule_processors import INJECTION, expand_override_macros, rule_processors
from pallas.context.session_messages import build_llm_chat_messages
from pallas.core.token_pieces import PieceTokenCounter
from pallas.core.tokens import count_tokens
from pallas.providers.formatter import format_messages

DEFAULT_PERSONA_BASE = (
    "你是帕拉斯，在 QQ 群里和大家聊天。你温柔、亲切、有耐心，说话自然口语化，"
    "像群里的一位老朋友，不端架子，也不说教。"
)
TIMELINE_IMAGES_CAPTION = "（以下是刚才群聊里出现的图片，按时间顺序，仅作语境参考）"


def _section(section_id: str, text: str, source: str, **kw: Any) -> PromptSection:
    return PromptSection(section_id, text, source=source, **kw)


class GuardProcessor(ChatProcessor):
    id, priority, core = S.GUARD, 100, True

    async def process(self, draft: PromptDraft, ctx: ChatTurnContext) -> PromptDraft:
        return draft.put_section(
            _section(S.GUARD, PROMPT_INJECTION_GUARD, "prompt_guard", protected=True, trusted=True)
        )


class PersonaProcessor(ChatProcessor):
    id, priority, core = S.PERSONA, 110, True

    async def process(self, draft: PromptDraft, ctx: ChatTurnContext) -> PromptDraft:
        text = ctx.persona_text.strip() or DEFAULT_PERSONA_BASE
        source = "persona_pack.base" if ctx.persona_text.strip() else "persona.default"
        # persona packs are admin files: their own line-start headers are kept
        return draft.put_section(
            _section(S.PERSONA, text, source, protected=True, headers=find_headers(text))
        )


class SelfIdentityProcessor(ChatProcessor):
    id, priority = S.SELF_IDENTITY, 120

    async def process(self, draft: PromptDraft, ctx: ChatTurnContext) -> PromptDraft:
        text = ctx.self_identity_text.strip()
        source = "persona_pack.self_identity"
        if not text:
            text = render_self_identity(
                persona_name=ctx.persona_name,
                nickname=ctx.bot_nickname,
                bot_id=ctx.bot_id,
                bot_label=ctx.bot_label,
            )
            source = "self_identity.compiled"
        return draft.put_section(
            _section(S.SELF_IDENTITY, text, source, protected=True, headers=find_headers(text))
        )


class RetrievedBlockProcessor(ChatProcessor):
    """Puts `ctx.blocks[section_id]` into its slot; nothing when absent or not allowed."""

    def __init__(self, section_id: str, priority: int) -> None:
        self.id = section_id
        self.priority = priority

    async def process(self, draft: PromptDraft, ctx: ChatTurnContext) -> PromptDraft:
        block = ctx.blocks.get(self.id)
        if block is None or not block.text.strip():
            return draft
        if self.id in S.PERSISTENT_MEMORY_IDS and not ctx.allow_persistent_memory:
            return draft.with_meta(**{f"skipped.{self.id}": "skipped_short_social_turn"})
        return draft.put_section(
            PromptSection(
                self.id,
                block.text,
                source=block.source or self.id,
                source_tokens=block.source_tokens,
                memory_ids=block.memory_ids,
                headers=block.headers,
            )
        )


class GroupTimelineProcessor(ChatProcessor):
    id, priority = S.GROUP_TIMELINE, 200

    async def process(self, draft: PromptDraft, ctx: ChatTurnContext) -> PromptDraft:
        cfg = ctx.config
        widths = {"addressed": cfg.timeline_width, "ambient": cfg.timeline_ambient_width}
        width = widths.get(ctx.timeline_mode, 0)
        if ctx.group_id == 0 or (width == 0 and not ctx.quoted_bot_text):
            return draft
        timeline = build_recent_group_timeline(
            ctx.timeline_messages,
            bot_id=ctx.bot_id,
            other_bot_ids=ctx.other_bot_ids,
            bot_label=ctx.bot_label,
            other_bot_label=ctx.other_bot_label,
            width=width,
            line_cap=cfg.timeline_line_cap,
            block_cap=cfg.timeline_block_cap,
            max_images=cfg.timeline_max_images,
            quoted_bot_text=ctx.quoted_bot_text,
            exclude_message_ids=() if ctx.message_id is None else (ctx.message_id,),
            group_id=ctx.group_id,
            anchored=cfg.prompt_layout == "cache",
        )
        if not timeline.present:
            return draft
        tokens = ambient_snapshot_from_timeline(timeline, ctx.group_id)
        section = PromptSection(
            S.GROUP_TIMELINE,
            timeline.text,
            source="group_timeline",
            source_tokens=tokens,
            memory_ids=tuple(str(mid) for mid in timeline.message_ids),
            headers=timeline.headers,
        )
        return replace(
            draft.put_section(section),
            timeline_present=True,
            timeline_images=tuple(timeline.image_urls),
        )


class ReplyShapeProcessor(ChatProcessor):
    id, priority, core = S.REPLY_SHAPE, 210, True

    async def process(self, draft: PromptDraft, ctx: ChatTurnContext) -> PromptDraft:
        text = render_reply_shape(
            ctx.reply_shape,
            persona_name=ctx.persona_name,
            allow_sticker=ctx.allow_sticker,
            sticker_names=ctx.sticker_names,
        )
        return draft.put_section(_section(S.REPLY_SHAPE, text, "reply_shape", protected=True))


class TurnPolicyProcessor(ChatProcessor):
    id, priority = S.TURN_POLICY, 220

    async def process(self, draft: PromptDraft, ctx: ChatTurnContext) -> PromptDraft:
        text = render_turn_policy(ctx.turn_policy)
        return draft.put_section(_section(S.TURN_POLICY, text, "turn_policy")) if text else draft


class CurrentTimeProcessor(ChatProcessor):
    id, priority = S.CURRENT_TIME, 230

    async def process(self, draft: PromptDraft, ctx: ChatTurnContext) -> PromptDraft:
        return draft.put_section(
            _section(S.CURRENT_TIME, render_current_time(ctx.now), "tools.time_now")
        )


class ToolContextProcessor(ChatProcessor):
    id, priority = S.TOOL_CONTEXT, 240

    async def process(self, draft: PromptDraft, ctx: ChatTurnContext) -> PromptDraft:
        text = render_tool_context(ctx.tool_results, rules=ctx.tool_rules)
        if not text:
            return draft
        tokens = tuple(r.source_token for r in ctx.tool_results if r.source_token)
        return draft.put_section(
            _section(S.TOOL_CONTEXT, text, "tool_context", source_tokens=tokens)
        )


class SessionMessagesProcessor(ChatProcessor):
    id, priority, core = "session_messages", 300, True

    async def process(self, draft: PromptDraft, ctx: ChatTurnContext) -> PromptDraft:
        cfg = ctx.config
        result = build_llm_chat_messages(
            ctx.current_text,
            group_id=ctx.group_id,
            current_user_id=ctx.user_id,
            user_turns=ctx.user_turns,
            group_turns=ctx.group_turns,
            persona_name=ctx.persona_name,
            assistant_label=ctx.assistant_label,
            can_read_runtime_state=ctx.can_read_runtime_state,
            timeline_present=draft.timeline_present,
            short_social=ctx.short_social,
            include_recent_pair=ctx.include_recent_pair,
            user_window=cfg.session_user_window,
            group_window=cfg.session_group_window,
            ambient_line_cap=cfg.ambient_line_cap,
            ambient_block_cap=cfg.ambient_block_cap,
            user_message_max_chars=cfg.user_message_max_chars,
            feedback_blocklist=ctx.feedback_blocklist,
            current_message_id=ctx.message_id,
        )
        return draft.with_messages([*draft.messages, *result.messages]).with_meta(
            ambient_skip_reason=result.ambient_skip_reason,
            current_warned=result.current_warned,
        )


class TimelineImagesProcessor(ChatProcessor):
    """Recent timeline images as one user message before the current one (vision models)."""

    id, priority = "timeline_images", 350

    async def process(self, draft: PromptDraft, ctx: ChatTurnContext) -> PromptDraft:
        urls = draft.timeline_images
        if not urls or not ctx.vision_enabled or ctx.recognition_question:
            return draft
        images = [{"type": "image_url", "image_url": {"url": url}} for url in urls]
        blocks: tuple[Mapping[str, Any], ...] = (
            {"type": "text", "text": TIMELINE_IMAGES_CAPTION},
            *images,
        )
        message = DraftMessage(
            "user", blocks, "group_timeline.images", "timeline_images", TIMELINE_IMAGES
        )
        return draft.insert_before_current(message)


class PromptOverridesProcessor(ChatProcessor):
    id, priority = "prompt_overrides", 400

    async def process(self, draft: PromptDraft, ctx: ChatTurnContext) -> PromptDraft:
        overrides = load_chat_prompt_overrides(ctx.bot_id, ctx.group_id, ctx.config)
        overrides = expand_override_macros(overrides, ctx)  # {{macros}}: one pass, values = data
        if not overrides:
            return draft
        sections, applied = apply_prompt_overrides(draft.sections, overrides)
        out = replace(draft, sections=())
        for section in sections:
            out = out.put_section(section)
        return out.with_meta(prompt_overrides=applied)


class BudgetProcessor(ChatProcessor):
    id, priority, core, fixed = "budget", 600, True, True

    def __init__(self, token_counter: PieceTokenCounter | None = None) -> None:
        # the reply path's counter (cached line counts across turns); else the process LRU
        self._count = count_tokens if token_counter is None else token_counter.count

    async def process(self, draft: PromptDraft, ctx: ChatTurnContext) -> PromptDraft:
        cfg = ctx.config
        result = apply_budget(
            draft,
            char_budget=cfg.char_budget,
            token_budget=image_budget(draft, ctx, cfg.token_budget or ctx.token_budget),
            partial_keep_min_chars=cfg.partial_keep_min_chars,
            block_max_chars=cfg.block_max_chars,
            count=self._count,
        )
        return result.draft


class FormatterProcessor(ChatProcessor):
    id, priority, fixed = "formatter", 800, True

    async def process(self, draft: PromptDraft, ctx: ChatTurnContext) -> PromptDraft:
        cfg = ctx.config
        if cfg.prompt_layout == "cache":
            layout = cache_layout(draft, block_max_chars=cfg.block_max_chars)
            request = format_messages(layout.messages, cfg.formatter, pinned=layout.pinned)
            return draft.with_request(request).with_meta(**{"trace.formatter": layout.trace})
        raw = draft_request(draft, block_max_chars=cfg.block_max_chars)
        head = len(raw) - len(draft.messages)  # the system prompt, when there is one
        pinned = {head + i for i, m in enumerate(draft.messages) if m.kind == INJECTION}
        return draft.with_request(format_messages(raw, cfg.formatter, pinned=pinned))


def default_processors(token_counter: PieceTokenCounter | None = None) -> list[ChatProcessor]:
    retrieved = [
        (S.GROUP_EXPRESSION, 130),
        (S.BEHAVIOR_REFERENCE, 140),
        (S.MEMORY, 150),
        (S.KNOWLEDGE, 160),
        (S.RELATIONSHIP, 170),
        (S.PERSON_FACTS, 180),
        (S.MID_TERM, 190),
    ]
    return [
        GuardProcessor(),
        PersonaProcessor(),
        SelfIdentityProcessor(),
        *(RetrievedBlockProcessor(sid, prio) for sid, prio in retrieved),
        GroupTimelineProcessor(),
        ReplyShapeProcessor(),
        TurnPolicyProcessor(),
        CurrentTimeProcessor(),
        ToolContextProcessor(),
        SessionMessagesProcessor(),
        TimelineImagesProcessor(),
        PromptOverridesProcessor(),
        *rule_processors(),  # regex 305 · worldbook 330 · macros 390 · injections 410
        BudgetProcessor(token_counter),
        FormatterProcessor(),
    ]


def build_context_pipeline(
    config: ContextConfig | None = None,
    extra: Sequence[ChatProcessor] = (),
    *,
    token_counter: PieceTokenCounter | None = None,
) -> ChatPipeline:
    """The context's processors plus `extra` (the feature slices' and plugin processors) with
    the group's order / disabled set; `token_counter` is the budget's (the reply path keeps
    one across turns). The chat pipeline the bot runs is `pallas.turn.parts.chat_pipeline`'s."""
    cfg = config or ContextConfig()
    return ChatPipeline(
        [*default_processors(token_counter), *extra],
        order=cfg.processor_order,
        disabled=cfg.disabled_processors,
    )
