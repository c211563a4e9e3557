"""Pure view models for the console pages (no I/O): bars, request redaction, usage series."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
import zlib
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pallas.context.sections import SECTION_IDS, SECTION_NAMES_ZH
from pallas.providers.error_text import llm_error_zh
from pallas.providers.models import ModelProfile, price_of, profile_for
from pallas.web.queries import UsageRow

PALETTE = (
    "#4e79a7",
    "#f28e2b",
    "#e15759",
    "#76b7b2",
    "#59a14f",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#bab0ac",
)
TASKS_ZH = {
    "chat": "回复",
    "cheap": "便宜任务（抽取记忆、学习、摘要）",
    "vision": "看图",
    "embedding": "向量检索",
    "transcribe": "语音转文字",
    "tts": "语音合成（prompt 列是合成的字数）",
}
TABLE_LIMIT = 100  # usage table rows shown (biggest first); the cost total covers them all
_SECRET_KEY = re.compile(r"(api_key|apikey|secret|password|access_token|authorization)$", re.I)
_DATA_URL = re.compile(r"^data:([\w/+.-]+);base64,(.*)$", re.S)


@dataclass(frozen=True, slots=True)
class BarPart:
    label: str
    tokens: int
    percent: float
    color: str
    kind: str  # "section" | "message"
    key: str = ""  # the section id / message kind (shown on hover)


# one fixed colour per system-prompt section (by its place in SECTION_IDS), so a section has
# the same colour in every turn; messages get one per role:kind
SECTION_COLORS = (
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#a6761d", "#666666",
)  # fmt: skip
MESSAGE_COLORS = ("#bab0ac", "#8cd17d", "#a0cbe8", "#ffbe7d", "#d4a6c8", "#86bcb6", "#f1ce63")
MESSAGE_KINDS_ZH = {
    "history": "对话历史", "session": "会话记录", "ambient": "群环境摘录", "current": "本条消息",
}  # fmt: skip


PROCESSOR_ZH = {
    "session_messages": "会话消息",
    "regex": "正则规则",
    "attachments": "附件",
    "timeline_images": "时间线图片",
    "worldbook": "世界书",
    "macros": "宏",
    "prompt_overrides": "提示词覆盖",
    "injections": "定位注入",
    "kb_placeholders": "知识库占位符",
    "svars": "会话变量",
    "budget": "预算裁剪",
    "formatter": "格式化",
}


def processor_zh(processor_id: str) -> str:
    """A pipeline processor's name in Chinese: its section's name, or what it does."""
    return PROCESSOR_ZH.get(processor_id) or SECTION_NAMES_ZH.get(processor_id, "")


def chat_zh(group_id: int) -> str:
    """How the console names a chat: `群 123456`, or 私聊 for group 0 (every private chat)."""
    return f"群 {group_id}" if group_id else "私聊"


def task_zh(task: str) -> str:
    """A model task in Chinese (`cheap` → 便宜任务…); the code itself when unknown."""
    return TASKS_ZH.get(task, task)


def section_zh(section_id: str) -> str:
    """`persona` → 人设; a placed injection `persona@before:worldbook_keyed` → 人设前·注入."""
    base, _, where = section_id.partition("@")
    name = SECTION_NAMES_ZH.get(base, base)
    if not where:
        return name
    side = {"before": "前", "after": "后"}.get(where.partition(":")[0], "")
    return f"{name}{side}·注入" if side else f"{name}·注入"


SNAPSHOT_OUTCOME_ZH = {
    "delivered": "已发送", "partial": "只发出一部分", "silent": "模型选择不说",
    "rejected": "回答不合格·未发", "stale": "消息过时·未发", "disabled": "本群已暂停",
}  # fmt: skip


def snapshot_outcome_zh(outcome: str) -> str:
    """A reply turn's outcome as the analyzer lists it: `delivered` → 已发送,
    `error:server_error` → 失败：模型服务出错（5xx）."""
    kind, _, code = outcome.partition(":")
    if kind == "error":
        return "失败：" + (llm_error_zh(code) or code)
    return SNAPSHOT_OUTCOME_ZH.get(outcome, outcome)


def section_color(section_id: str) -> str:
    if section_id in SECTION_IDS:
        return SECTION_COLORS[SECTION_IDS.index(section_id) % len(SECTION_COLORS)]
    return SECTION_COLORS[zlib.crc32(section_id.encode()) % len(SECTION_COLORS)]


def message_color(role_kind: str) -> str:
    return MESSAGE_COLORS[zlib.crc32(role_kind.encode()) % len(MESSAGE_COLORS)]


def token_bar(data: Mapping[str, Any]) -> list[BarPart]:
    """One stacked bar: every system section, then every message, sized by tokens; a colour
    belongs to the section (or the message's role and kind), not to its position."""
    parts: list[tuple[str, str, int, str, str]] = []  # kind, label, tokens, colour, key
    for s in data.get("sections", []):
        sid = str(s.get("id"))
        label = section_zh(sid)
        parts.append(("section", label, int(s.get("tokens") or 0), section_color(sid), sid))
    for i, m in enumerate(data.get("messages", [])):
        key = f"{m.get('role')}:{m.get('kind')}"
        label = f"#{i} {m.get('role')} {MESSAGE_KINDS_ZH.get(str(m.get('kind')), m.get('kind'))}"
        parts.append(("message", label, int(m.get("tokens") or 0), message_color(key), key))
    total = sum(p[2] for p in parts) or 1
    return [
        BarPart(label, tokens, round(100 * tokens / total, 2), color, kind, key)
        for kind, label, tokens, color, key in parts
    ]


PROVENANCE_ZH = {
    "mem": "记忆",
    "memory": "记忆块",
    "session": "会话记录",
    "ambient": "群环境摘录",
    "current": "本条消息",
    "topic": "旧话题",
    "session_topic": "旧话题",
    "worldbook": "世界书",
    "pair": "学到的接话",
    "strategy": "接话策略",
    "tool": "工具",
    "attachments": "附件",
    "image": "图片",
    "global": "全局提示覆盖",
    "override": "提示覆盖",
    "kb": "知识库",
    "svar": "会话变量",
}
MEMORY_KINDS_ZH = {
    "group_memory": "群记忆", "group_events": "群事件", "ip_knowledge": "设定知识",
    "teachings": "教学", "knowledge": "知识库", "relationship": "关系",
    "person_facts": "人物事实", "old_topics": "旧话题",
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Provenance:
    """One readable source of a section or message: `世界书「方舟」×2`, the raw ids on hover."""

    label: str
    ids: str  # the raw tokens, space-separated (the `title`)


def provenance(tokens: Iterable[Any], members: Mapping[int, str] | None = None) -> list[Provenance]:
    """Raw provenance tokens (`mem:12`, `worldbook:book#3`, `current:991`) grouped into readable
    sources, in first-seen order; `members`: a message id's sender name, for `current:<id>`."""
    groups: dict[str, list[str]] = {}
    for token in dict.fromkeys(str(t) for t in tokens if t):
        groups.setdefault(_provenance_label(token, members or {}), []).append(token)
    return [
        Provenance(label if len(ids) == 1 else f"{label} ×{len(ids)}", " ".join(ids))
        for label, ids in groups.items()
    ]


def _provenance_label(token: str, members: Mapping[int, str]) -> str:
    kind, _, rest = token.partition(":")
    if not rest:
        return "群消息" if token.lstrip("-").isdigit() else token  # a timeline's message ids
    name = PROVENANCE_ZH.get(kind, kind)
    if kind == "memory":
        return f"记忆块·{MEMORY_KINDS_ZH.get(rest, rest)}"
    if kind == "worldbook":
        return f"世界书「{rest.rsplit('#', 1)[0]}」"
    if kind == "tool":
        return f"工具 {rest}"
    if kind == "current" and rest.isdigit() and members.get(int(rest)):
        return f"本条消息（{members[int(rest)]}）"
    return name


def _hash_image(url: str) -> str:
    match = _DATA_URL.match(url)
    if match is None:
        return url
    try:
        raw = base64.b64decode(match.group(2), validate=False)
    except (binascii.Error, ValueError):
        raw = match.group(2).encode()
    return f"<{match.group(1)} {len(raw)} bytes sha256:{hashlib.sha256(raw).hexdigest()[:16]}>"


def redact_request(value: Any) -> Any:
    """The exact request with inline image bytes replaced by their size and hash."""
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            if key == "url" and isinstance(item, str):
                out[key] = _hash_image(item)
            elif _SECRET_KEY.search(str(key)):
                out[key] = "***"
            else:
                out[key] = redact_request(item)
        return out
    if isinstance(value, list | tuple):
        return [redact_request(v) for v in value]
    return value


@dataclass(frozen=True, slots=True)
class CacheLayoutView:
    """Where a turn's cacheable prefix ended (the formatter's trace of the cache layout)."""

    prefix_messages: int
    prefix_chars: int
    total_chars: int
    stable: list[str]  # section names in Chinese
    per_turn: list[str]

    @property
    def share(self) -> float:
        return self.prefix_chars / self.total_chars if self.total_chars else 0.0


def cache_layout_view(data: Mapping[str, Any]) -> CacheLayoutView | None:
    trace = (data.get("processor_traces") or {}).get("formatter") or {}
    if trace.get("layout") != "cache":
        return None
    request = data.get("request") or []
    total = sum(len(str(m.get("content", ""))) for m in request if isinstance(m, Mapping))

    def names(ids: Any) -> list[str]:
        return [SECTION_NAMES_ZH.get(str(i), str(i)) for i in ids or []]

    return CacheLayoutView(
        prefix_messages=int(trace.get("prefix_messages", 0)),
        prefix_chars=int(trace.get("prefix_chars", 0)),
        total_chars=total,
        stable=names(trace.get("stable_sections")),
        per_turn=names(trace.get("per_turn_sections")),
    )


def request_json(data: Mapping[str, Any]) -> str:
    return json.dumps(redact_request(data.get("request", [])), ensure_ascii=False, indent=1)


def redact_config(rows: Iterable[Any]) -> list[Any]:
    """Config origin rows with any secret-looking key's value hidden."""
    out = []
    for row in rows:
        if _SECRET_KEY.search(row.key.rsplit(".", 1)[-1]):
            row = type(row)(row.key, "***", row.origin)
        out.append(row)
    return out


@dataclass(frozen=True, slots=True)
class UsageSeries:
    days: list[str]
    series: list[tuple[str, str, list[int]]]  # (label, color, tokens per day)
    max_tokens: int
    rows: list[dict[str, Any]]  # per day × group × task × model, with cost (the first TABLE_LIMIT)
    total_cost: float | None
    row_count: int = 0  # rows before the TABLE_LIMIT cut
    prompt_tokens: int = 0  # over every table row
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    cost_without_cache: float | None = None  # the same tokens billed with no cache hits

    @property
    def cache_share(self) -> float:
        return self.cached_tokens / self.prompt_tokens if self.prompt_tokens else 0.0


def cost_of(
    row: UsageRow, profiles: Mapping[str, ModelProfile], *, cached_discount: bool = True
) -> float | None:
    """The row's bill (`price_of`); `cached_discount=False`: as if nothing had hit the cache."""
    profile = profile_for(dict(profiles), row.model)
    return price_of(
        profile, row.prompt_tokens, row.cached_tokens, row.completion_tokens,
        cache=cached_discount,
    )  # fmt: skip


def usage_series(
    per_day_task: Sequence[UsageRow],
    table_rows: Sequence[UsageRow],
    days: Sequence[str],
    profiles_of: Callable[[int], Mapping[str, ModelProfile]],
) -> UsageSeries:
    """Tokens per day for each task (stacked in the chart), and the table rows with cost
    (`profiles_of(group_id)`: that group's `[models]` with their prices)."""
    by_task: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for row in per_day_task:
        by_task[row.task][row.day] += row.tokens
    table = []
    costs = []
    naive_costs = []
    profiles: dict[int, Mapping[str, ModelProfile]] = {}
    for row in table_rows:
        if row.group_id not in profiles:
            profiles[row.group_id] = profiles_of(row.group_id)
        cost = cost_of(row, profiles[row.group_id])
        if cost is not None:
            costs.append(cost)
            naive_costs.append(cost_of(row, profiles[row.group_id], cached_discount=False) or 0)
        table.append(
            {
                "day": row.day,
                "group_id": row.group_id,
                "task": row.task,
                "model": row.model,
                "endpoint": row.endpoint or "primary",
                "calls": row.calls,
                "prompt_tokens": row.prompt_tokens,
                "completion_tokens": row.completion_tokens,
                "cached_tokens": row.cached_tokens,
                "reasoning_tokens": row.reasoning_tokens,
                "cache_share": row.cached_tokens / row.prompt_tokens if row.prompt_tokens else 0,
                "tokens": row.tokens,
                "cost": None if cost is None else round(cost, 4),
            }
        )
    series = [
        (task, PALETTE[i % len(PALETTE)], [by_task[task].get(d, 0) for d in days])
        for i, task in enumerate(sorted(by_task))
    ]
    per_day = [sum(s[2][i] for s in series) for i in range(len(days))]
    table.sort(key=lambda r: (r["day"], r["tokens"]), reverse=True)
    return UsageSeries(
        list(days),
        series,
        max(per_day, default=0),
        table[:TABLE_LIMIT],
        round(sum(costs), 4) if costs else None,
        len(table),
        prompt_tokens=sum(r.prompt_tokens for r in table_rows),
        cached_tokens=sum(r.cached_tokens for r in table_rows),
        reasoning_tokens=sum(r.reasoning_tokens for r in table_rows),
        cost_without_cache=round(sum(naive_costs), 4) if costs else None,
    )
