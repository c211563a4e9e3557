"""A turn's retrieval traces in plain Chinese, for the analyzer's 检索来源 card.

An admin asking "why did it not remember that" reads, per source, what was chosen, how many
were weighed, and why the rest were left out — not similar enough, about someone else, another
thing of the same kind, no number for a question asking one — or why the source was skipped.
The group's learning says what it gave: the group's own sayings, its reply habits, the reply
shape (`learning_lines`). The full trace (JSON) stays one tap away. The CLI analyzer keeps its
English line (`pallas.context.analyzer.chosen_summary`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pallas.web.views import MEMORY_KINDS_ZH

SOURCES_ZH = {
    "memory": "记忆",
    "person_facts": "关于这位群友",
    "relationship": "与这位群友的关系",
    "knowledge": "知识库",
    "worldbook": "世界书",
    "old_topics": "旧话题",
    "group_learning": "学到的接话",
}
SKIPPED_ZH = {
    "skipped_short_social_turn": "简短寒暄，不查长期记忆",
    "persistent_memory_not_allowed": "这一轮不用长期记忆",
    "processor_disabled": "这一部分在设置里关掉了",
    "not_a_member_turn": "不是群友的发言",
    "private_chat": "私聊里不用",
    "inject_disabled": "注入已关闭",
    "empty_query": "没有可检索的内容",
    "no_query": "没有可检索的内容",
    "no_topics": "还没有旧话题",
}
# why a candidate was left out, in the order a retrieval filters (`ranking.scoring.retrieve`)
DROPPED_ZH = {
    "scope": "不在本群可见范围",
    "similarity": "与问题不够相近",
    "subject": "说的是别人，或没提到问的那个人",
    "instance": "说的是同类的另一样东西，或没提到问的那一样",
    "answer_type": "没有问的那个数",
    "threshold": "相关度不够",
    "top_k": "超出条数上限",
    "cap": "超出字数上限",
}


@dataclass(frozen=True, slots=True)
class RetrievalRow:
    """One source of a turn: its Chinese label, its name in the trace, a line per block, the
    JSON."""

    label: str
    name: str
    lines: tuple[str, ...]
    full: str


def retrieval_rows(data: Mapping[str, Any]) -> list[RetrievalRow]:
    """One row per retrieval source of a turn's snapshot (`data["retrieval"]["traces"]`)."""
    traces = (data.get("retrieval") or {}).get("traces") or {}
    rows = []
    for name, trace in traces.items():
        full = json.dumps(trace, ensure_ascii=False, indent=1, default=str)
        label = SOURCES_ZH.get(str(name), str(name))
        rows.append(RetrievalRow(label, str(name), source_lines(trace), full))
    return rows


def source_lines(trace: Any) -> tuple[str, ...]:
    """What one source did: skipped and why, or a line per block (see the module)."""
    if not isinstance(trace, Mapping):
        return (str(trace),)
    if "skipped" in trace and not isinstance(trace["skipped"], list):
        return (f"跳过：{SKIPPED_ZH.get(str(trace['skipped']), str(trace['skipped']))}",)
    if "expression_candidates" in trace:  # the group's learning (`features.learning`)
        return learning_lines(trace)
    parts = [block_summary(trace)] if "chosen" in trace else []
    for key, sub in trace.items():
        if isinstance(sub, Mapping) and "chosen" in sub:
            parts.append(f"{MEMORY_KINDS_ZH.get(str(key), str(key))}：{block_summary(sub)}")
        elif isinstance(sub, Mapping) and "activated" in sub:
            parts.append(f"{SOURCES_ZH.get(str(key), str(key))}：{_activated(sub)}")
        elif isinstance(sub, Mapping) and "skipped" in sub and not isinstance(sub["skipped"], list):
            label = MEMORY_KINDS_ZH.get(str(key), str(key))
            parts.append(f"{label}：跳过，{SKIPPED_ZH.get(str(sub['skipped']), sub['skipped'])}")
    return tuple(parts) or ("见下方完整记录",)  # a source that retrieves no blocks


def block_summary(trace: Mapping[str, Any]) -> str:
    """One retrieval block: chosen, weighed, the gate, each reason the rest were left out."""
    chosen = [str(c) for c in _listed(trace.get("chosen"))]
    fallback = [str(c) for c in _listed(trace.get("fallback"))]
    candidates = trace.get("candidates")
    scored = _number(trace.get("scored"))
    if scored is None:
        scored = len(candidates) if isinstance(candidates, list) else 0
    dropped = _dropped(trace)
    if not scored and not chosen and not fallback and not dropped:
        return "还没有可选的条目"
    head = f"选中 {len(chosen)} 条（{'、'.join(chosen)}）" if chosen else "没有选中"
    if fallback:
        head += f"，另补上这位群友的其他 {len(fallback)} 条"
    weighed = f"评估 {scored:.0f} 条"
    if "embeddings" in trace:
        by = "按语义和字面" if trace["embeddings"] else "只按字面（还没有向量）"
        if trace["embeddings"] and trace.get("question_adapter") is True:
            by = "按语义（问句按本地模型的问答权重调整）和字面"
        weighed = by + weighed
    gate = trace.get("gate")
    if isinstance(gate, Mapping) and (level := _number(gate.get("min_similarity"))) is not None:
        weighed += f"，相近度门槛 {level:.2f}"
    out = f"{head}；{weighed}"
    if dropped:
        out += "；未入选：" + "、".join(f"{why} {n} 条" for why, n in dropped)
    profile = trace.get("profile")
    if isinstance(profile, Mapping) and (facts := _number(profile.get("facts"))) is not None:
        out += f"；画像里 {facts:.0f} 条"
        if aside := _number(profile.get("aside")):
            out += f"，另附 {aside:.0f} 条「也记得（未必相关）」"
    return out


def learning_lines(trace: Mapping[str, Any]) -> tuple[str, ...]:
    """What the group's learning gave this turn: its own ways of saying things, the reply
    habits observed and reflected on, the reply shape, what feedback blocked. A snapshot
    stored before the numbers were recorded shows what it has."""
    pool = _number(trace.get("pool"))
    near = _number(trace.get("expression_candidates"))
    matched = _number(trace.get("expression_matched"))
    pool_text = f"，表达池 {pool:.0f} 条" if pool is not None else ""
    if pool == 0:
        said = "群里的说法：还没学到"
    elif matched:
        said = f"群里的说法：参考 {matched:.0f} 条（相近的 {near or 0:.0f} 条{pool_text}）"
    elif near:
        said = f"群里的说法：没有用上（相近的 {near:.0f} 条{pool_text}）"
    else:
        said = f"群里的说法：没有相近的{pool_text}"
    lines = [said]
    observed, reflection = _number(trace.get("observed")), _number(trace.get("reflection"))
    if observed is not None or reflection is not None:
        habits = [f"观察到 {n:.0f} 条" for n in [observed] if n]
        habits += [f"复盘 {n:.0f} 条" for n in [reflection] if n]
        lines.append("接话参考：" + ("、".join(habits) if habits else "没有"))
    lines.append(_shape_line(trace))
    if blocked := _number(trace.get("blocked_phrases")):
        lines.append(f"因差评屏蔽了 {blocked:.0f} 个短语")
    return tuple(lines)


def _shape_line(trace: Mapping[str, Any]) -> str:
    mode = "（闲聊）" if trace.get("casual") is True else ""
    segments = _number(trace.get("shape_segments"))
    chars = _listed(trace.get("shape_chars"))
    low, high = (_number(c) for c in chars[:2]) if len(chars) >= 2 else (None, None)
    turns = _number(trace.get("shape_turns"))
    if segments is None:
        return f"回复形状{mode}：本群样本还不够，用默认"
    learned = f"按本群 {turns:.0f} 轮学到" if turns else "按本群学到"
    size = f"、每个 {low:.0f}–{high:.0f} 字" if low is not None and high is not None else ""
    return f"回复形状{mode}：{learned}，建议 {segments:.0f} 个气泡{size}"


def _dropped(trace: Mapping[str, Any]) -> list[tuple[str, int]]:
    """(reason in Chinese, count) for each reason that left something out, in filter order:
    the bounded trace's counts (`dropped`), else the lengths of its `dropped_by_*` lists."""
    counts = trace.get("dropped")
    if not isinstance(counts, Mapping):
        counts = {
            str(k).removeprefix("dropped_by_"): len(v or [])
            for k, v in trace.items()
            if str(k).startswith("dropped_by_") and isinstance(v, list | tuple)
        }
    numbers = {str(k): int(n) for k, v in counts.items() if (n := _number(v))}
    out = [(DROPPED_ZH[k], numbers[k]) for k in DROPPED_ZH if k in numbers]
    return out + [(k, n) for k, n in numbers.items() if k not in DROPPED_ZH]


def _number(value: Any) -> float | None:
    """A stored trace's number, or None for anything else (an old or damaged snapshot must
    not break the page)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _activated(sub: Mapping[str, Any]) -> str:
    ids = [str(a.get("id")) for a in _listed(sub.get("activated")) if isinstance(a, Mapping)]
    return f"触发 {len(ids)} 条（{'、'.join(ids)}）" if ids else "没有触发"
