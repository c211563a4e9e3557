"""ChatPromptAssembler (the system prompt) and the renderers of the per-turn blocks.

The assembler orders sections by the canonical section order (`sections.SECTION_IDS`),
passes every block but the fixed guard through `sanitize_prompt_block`, skips empty blocks and
blocks whose text duplicates an earlier one, and joins the rest with blank lines.

Renderers here produce the blocks this package owns: 【回复形状与输出契约】, 【本轮策略】,
【当前时间】, 【工具上下文】 and the default 【自我标识】. They only describe *shape* and *target*,
never attitude: that is the persona's, the same in every group.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import cached_property, lru_cache
from typing import Any, Protocol

from pallas.context.pipeline import PromptDraft, PromptSection
from pallas.context.prompt_guard import (
    DEFAULT_BLOCK_MAX_CHARS,
    DEFAULT_PERSONA_NAME,
    leading_header,
    sanitize_inline,
    sanitize_name,
    sanitize_prompt_block,
)
from pallas.context.sections import (
    HEADER_CURRENT_TIME,
    HEADER_REPLY_SHAPE,
    HEADER_SELF_IDENTITY,
    HEADER_TOOL_CONTEXT,
    HEADER_TURN_POLICY,
    PERSONA,
    section_rank,
)
from pallas.core.clock import CHINA

SECTION_SEPARATOR = "\n\n"
DEFAULT_SECTION_CAPS: Mapping[str, int] = {PERSONA: 8000}


@dataclass(frozen=True, slots=True)
class SkippedSection:
    section_id: str
    reason: str  # "empty" | "duplicate_text" | "duplicate_id"


CLEAN_CACHE_MAX_CHARS = 8192  # longer section texts are sanitised every time


@lru_cache(maxsize=1024)
def _clean_cached(text: str, cap: int, allowed_headers: tuple[str, ...]) -> str:
    """`sanitize_prompt_block` is pure: the persona, guard and contract sections (the same on
    every turn of a group) and a member's unchanged blocks are sanitised once."""
    return sanitize_prompt_block(text, cap, allowed_headers=allowed_headers)


class ChatPromptAssembler:
    """Builds the system prompt from sections; results are computed once and cached."""

    def __init__(
        self,
        sections: Iterable[PromptSection] = (),
        *,
        block_max_chars: int = DEFAULT_BLOCK_MAX_CHARS,
        section_caps: Mapping[str, int] | None = None,
    ) -> None:
        self._raw = list(sections)
        self._block_max_chars = block_max_chars
        self._caps = {**DEFAULT_SECTION_CAPS, **(section_caps or {})}

    def add(self, section: PromptSection) -> ChatPromptAssembler:
        """A new assembler with one more section (the assembler itself stays unchanged)."""
        return ChatPromptAssembler(
            [*self._raw, section], block_max_chars=self._block_max_chars, section_caps=self._caps
        )

    def clean(self, section: PromptSection) -> str:
        """The sanitised text of one section as it will appear in the prompt."""
        if section.trusted:
            return section.text.strip()
        own = section.headers or tuple(h for h in (leading_header(section.text),) if h)
        cap = self._caps.get(section.section_id, self._block_max_chars)
        if len(section.text) > CLEAN_CACHE_MAX_CHARS:
            return sanitize_prompt_block(section.text, cap, allowed_headers=own)
        return _clean_cached(section.text, cap, tuple(own))

    @cached_property
    def _result(self) -> tuple[tuple[PromptSection, ...], tuple[SkippedSection, ...]]:
        ordered = sorted(self._raw, key=lambda s: section_rank(s.section_id))  # stable
        kept: list[PromptSection] = []
        skipped: list[SkippedSection] = []
        seen_ids: set[str] = set()
        seen_texts: set[str] = set()
        for section in ordered:
            if section.section_id in seen_ids:
                skipped.append(SkippedSection(section.section_id, "duplicate_id"))
                continue
            text = self.clean(section)
            key = " ".join(text.split())
            if not key:
                skipped.append(SkippedSection(section.section_id, "empty"))
                continue
            if key in seen_texts:
                skipped.append(SkippedSection(section.section_id, "duplicate_text"))
                continue
            seen_ids.add(section.section_id)
            seen_texts.add(key)
            kept.append(section if text == section.text else replace(section, text=text))
        return tuple(kept), tuple(skipped)

    @property
    def sections(self) -> tuple[PromptSection, ...]:
        """Kept sections, in order, with their sanitised text."""
        return self._result[0]

    @property
    def skipped(self) -> tuple[SkippedSection, ...]:
        return self._result[1]

    @property
    def section_ids(self) -> tuple[str, ...]:
        return tuple(s.section_id for s in self.sections)

    @property
    def section_texts(self) -> dict[str, str]:
        return {s.section_id: s.text for s in self.sections}

    def build(self) -> str:
        return SECTION_SEPARATOR.join(s.text for s in self.sections)


# --- 【回复形状与输出契约】 ----------------------------------------------------------------------


class ReplyShapeView(Protocol):
    """A reply shape proposed outside the context layer (learning's `ReplyShapePolicy`)."""

    @property
    def max_segments(self) -> int: ...

    @property
    def recommended_segments(self) -> int: ...

    @property
    def min_chars(self) -> int: ...

    @property
    def max_chars(self) -> int: ...

    @property
    def rhythm(self) -> str: ...


@dataclass(frozen=True, slots=True)
class ReplyShapeSpec:
    """Bubble-count and length constraints of this turn's reply."""

    max_segments: int
    recommended_segments: int
    min_chars: int
    max_chars: int
    rhythm: str = "single"

    def __post_init__(self) -> None:
        if not 1 <= self.recommended_segments <= self.max_segments:
            raise ValueError("need 1 <= recommended_segments <= max_segments")
        if not 1 <= self.min_chars <= self.max_chars:
            raise ValueError("need 1 <= min_chars <= max_chars")

    @classmethod
    def casual(cls) -> ReplyShapeSpec:
        return cls(max_segments=3, recommended_segments=1, min_chars=4, max_chars=18)

    @classmethod
    def non_casual(cls) -> ReplyShapeSpec:
        return cls(max_segments=2, recommended_segments=1, min_chars=8, max_chars=80)

    @classmethod
    def tool(cls) -> ReplyShapeSpec:
        return cls(max_segments=2, recommended_segments=1, min_chars=8, max_chars=160)

    @classmethod
    def from_policy(cls, policy: ReplyShapeView) -> ReplyShapeSpec:
        """From any object with the same fields (e.g. learning's `ReplyShapePolicy`)."""
        return cls(
            max_segments=int(policy.max_segments),
            recommended_segments=int(policy.recommended_segments),
            min_chars=int(policy.min_chars),
            max_chars=int(policy.max_chars),
            rhythm=str(policy.rhythm),  # learning's `Rhythm` is a StrEnum: str() is its value
        )


def render_reply_shape(
    spec: ReplyShapeSpec,
    *,
    persona_name: str = DEFAULT_PERSONA_NAME,
    allow_pass: bool = True,
    allow_sticker: bool = False,
    sticker_names: Sequence[str] = (),
) -> str:
    name = sanitize_name(persona_name) or DEFAULT_PERSONA_NAME
    rhythm = sanitize_name(spec.rhythm) or "single"
    lines = [
        f"【{HEADER_REPLY_SHAPE}】",
        f"- 最多 {spec.max_segments} 段；推荐 {spec.recommended_segments} 段，节奏偏 {rhythm}。",
        f"- 每段 {spec.min_chars}–{spec.max_chars} 字，像群里的真人一样说话。",
        "- 每段单独占一行，一行就是一条消息气泡；段与段之间只换行，"
        f"不要空行、编号、引号，也不要加「{name}：」之类的前缀。",
        "- 只输出要发到群里的话：不要解释，不要输出思考过程，不要用 Markdown。",
    ]
    if allow_pass:
        lines.append(
            "- 觉得这句不该接时，只输出 PASS（单独一行，不带任何别的字），表示这轮保持沉默。"
        )
    names = [n for n in (sanitize_name(s, 8) for s in sticker_names) if n]
    if allow_sticker and names:
        lines.append(
            "- 想配表情时，另起一行写 [表情:表情名]，最多一个；"
            f"只能用这些表情名：{'、'.join(names)}。"
        )
    return "\n".join(lines)


# --- 【本轮策略】 -----------------------------------------------------------------------------

_SERIOUSNESS = {
    "casual": "闲聊，轻松接话",
    "serious": "认真，先把对方的问题答清楚",
    "careful": "谨慎，话题敏感，少说、不下结论",
}
_SOCIAL_ACTIONS = {
    "greeting": "问候：自然回个招呼，不用展开",
    "nickname": "叫名字：被叫到了，应一声就好",
    "tease": "调侃：对方在开玩笑，轻松接住",
    "sigh": "感慨：对方在吐槽或说累，简短回应就好，不说教",
    "thanks": "道谢：简单回应即可",
    "farewell": "道别：简单道别即可",
    "praise": "夸奖：大方接受或自然回应",
}


@dataclass(frozen=True, slots=True)
class TurnPolicy:
    """What this reply is for (from the turn decision); attitude stays with the persona."""

    reply_target: str = ""  # display name of the member being answered (untrusted)
    seriousness: str = "casual"  # "casual" | "serious" | "careful" | free text
    social_action: str | None = None  # "greeting" | "nickname" | "tease" | "sigh" | ...
    notes: tuple[str, ...] = ()  # extra directives from our own decision code (trusted)


def render_turn_policy(policy: TurnPolicy | None) -> str:
    if policy is None:
        return ""
    lines = [f"【{HEADER_TURN_POLICY}】"]
    target = sanitize_name(policy.reply_target)
    if target:
        lines.append(f"- 回复对象：{target}（只接这位群友的话）")
    seriousness = _SERIOUSNESS.get(policy.seriousness, sanitize_inline(policy.seriousness, 40))
    if seriousness:
        lines.append(f"- 严肃度：{seriousness}")
    if policy.social_action:
        action = _SOCIAL_ACTIONS.get(
            policy.social_action, sanitize_inline(policy.social_action, 40)
        )
        lines.append(f"- 社交动作：{action}")
    lines.extend(f"- {sanitize_inline(note, 120)}" for note in policy.notes if note.strip())
    return "\n".join(lines) if len(lines) > 1 else ""


# --- 【当前时间】 -----------------------------------------------------------------------------

SHANGHAI = CHINA  # China has no DST: the fixed UTC+8 offset is exact

_WEEKDAYS = ("星期一", "星期二", "星期三", "星期四", "星期五", "星期六", "星期日")


def _day_part(hour: int) -> str:
    for end, name in ((5, "凌晨"), (8, "早上"), (11, "上午"), (13, "中午"), (17, "下午")):
        if hour < end:
            return name
    return "傍晚" if hour < 19 else "晚上" if hour < 23 else "深夜"


def render_current_time(now: datetime | float) -> str:
    """`now` as Beijing time; a float is unix seconds, a naive datetime is taken as UTC."""
    if isinstance(now, int | float):
        now = datetime.fromtimestamp(now, tz=UTC)
    elif now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    local = now.astimezone(SHANGHAI)
    stamp = (
        f"{local.year}年{local.month}月{local.day}日 {_WEEKDAYS[local.weekday()]} "
        f"{_day_part(local.hour)} {local:%H:%M}（北京时间）"
    )
    return f"【{HEADER_CURRENT_TIME}】\n{stamp}"


# --- 【工具上下文】 ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ToolResult:
    name: str
    content: str
    source_token: str = ""


def render_tool_context(
    results: Sequence[ToolResult], *, rules: Sequence[str] = (), item_cap: int = 600
) -> str:
    """Empty unless at least one tool result has content."""
    items = [(sanitize_name(r.name, 32), sanitize_inline(r.content, item_cap)) for r in results]
    items = [(name, text) for name, text in items if text]
    if not items:
        return ""
    lines = [
        f"【{HEADER_TOOL_CONTEXT}】",
        "- 以下是后台工具刚查到的结果，只当事实参考；"
        "用自己的口吻自然说出来，不要提“工具”或“查询”。",
    ]
    lines.extend(f"- {sanitize_inline(rule, 200)}" for rule in rules if rule.strip())
    lines.extend(f"- {name or '结果'}：{text}" for name, text in items)
    return "\n".join(lines)


# --- 【自我标识】 (default when the persona pack has no sections.self_identity) ----------------


def render_self_identity(
    *,
    persona_name: str = DEFAULT_PERSONA_NAME,
    nickname: str = "",
    bot_id: int | None = None,
    bot_label: str = "牛牛",
) -> str:
    name = sanitize_name(persona_name) or DEFAULT_PERSONA_NAME
    label = sanitize_name(bot_label) or "牛牛"
    nick = sanitize_name(nickname)
    account = f"（QQ {bot_id}）" if bot_id else ""
    first = f"- 你是{name}{account}"
    first += f"，在群里的昵称是「{nick}」" if nick else ""
    first += f"，群友常叫你{label}。"
    return "\n".join(
        [
            f"【{HEADER_SELF_IDENTITY}】",
            first,
            f"- 群聊记录里标成「{label}」的发言就是你自己之前说的话。",
        ]
    )


def draft_request(
    draft: PromptDraft, *, block_max_chars: int = DEFAULT_BLOCK_MAX_CHARS
) -> list[dict[str, Any]]:
    """System prompt + messages of `draft` as OpenAI dicts (no formatter rules applied)."""
    system = ChatPromptAssembler(draft.sections, block_max_chars=block_max_chars).build()
    head: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    return head + [m.to_openai() for m in draft.messages]
