"""Index-time expansion, the pure parts: fact → prompt, answer → `Expansion`, stored → index text.

When a memory row is stored, the cheap background model may add what a later question is likely
to use: a few keywords, one category and two or three questions the fact answers ("TA晕车" →
坐车 / 交通 / 身体不适, "health", "我坐车会怎么样？"). They are stored with the row (its `source`
JSON, key ``expansion``), indexed by retrieval (BM25 and concept classes) and never shown to the
chat model. Nothing the model says is trusted: items are sanitised, capped, and an answer that
looks like an injection or does not parse is dropped — the row then stays searchable as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pallas.context.prompt_guard import looks_like_injection, sanitize_inline
from pallas.providers.json_answer import json_payload
from pallas.ranking import class_names

MAX_KEYWORDS = 8
MAX_QUESTIONS = 3
KEYWORD_CHARS = 12
QUESTION_CHARS = 30
CATEGORY_CHARS = 16

SYSTEM_PROMPT = "\n".join(
    [
        "你为一条群聊机器人的记忆生成检索索引。只输出 JSON，不要解释。",
        "- keywords：3到8个检索关键词，包括同义词、上位类别词（如“游泳”→“运动”）。",
        "- category：从下列类别中选一个最贴切的：{categories}；都不合适填 other。",
        "- questions：2到3个这条记忆能回答的、群友可能会问的问题，用第一人称“我”提问。",
        "- 记忆里的“TA”指被记住的那个群友。",
        '输出格式：{{"keywords": ["…"], "category": "…", "questions": ["…"]}}',
    ]
)


@dataclass(frozen=True, slots=True)
class Expansion:
    keywords: tuple[str, ...]
    category: str
    questions: tuple[str, ...]

    def to_source(self) -> dict[str, Any]:
        return {
            "keywords": list(self.keywords),
            "category": self.category,
            "questions": list(self.questions),
        }


def expansion_messages(text: str, kind: str) -> list[dict[str, str]]:
    system = SYSTEM_PROMPT.format(categories="、".join(class_names()))
    memory = sanitize_inline(text, 300)
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": f"记忆类型：{kind}\n记忆：{memory}"},
    ]


def _clean_items(raw: Any, limit: int, chars: int) -> tuple[str, ...]:
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list):
        return ()
    out: list[str] = []
    for item in raw:
        if not isinstance(item, str | int | float):
            continue
        text = sanitize_inline(str(item), chars).strip()
        if text and not looks_like_injection(text) and text not in out:
            out.append(text)
        if len(out) >= limit:
            break
    return tuple(out)


def parse_expansion(answer: str) -> Expansion | None:
    """The model's answer as an `Expansion`; None when it is unusable."""
    payload = json_payload(answer)
    if not isinstance(payload, dict):
        return None
    keywords = _clean_items(payload.get("keywords"), MAX_KEYWORDS, KEYWORD_CHARS)
    questions = _clean_items(payload.get("questions"), MAX_QUESTIONS, QUESTION_CHARS)
    category = _clean_items(payload.get("category"), 1, CATEGORY_CHARS)
    if not keywords and not questions:
        return None
    return Expansion(keywords, category[0] if category else "", questions)
