"""A scripted cheap model for the consolidation benchmarks: it merges a member's listed facts
the way a model that read them would — facts of one shape ("TA喜欢火锅", "TA喜欢寿司") become
one statement ("TA喜欢火锅、寿司…"), everything else stays as said — and answers the teaching
judge with "add". It measures what a consolidated profile costs, not a real model's wording."""

from __future__ import annotations

import json
import re
from typing import Any

from pallas.core.tokens import count_message_tokens, count_tokens
from pallas.features.memory_upkeep.consolidation import CONSOLIDATE_SYSTEM, STATEMENT_MAX_CHARS
from tests.harness.fake_openai import FakeOpenAI, Scripted

_LISTED = re.compile(r"^\[(f\d+)\] (.+)$", re.MULTILINE)
# "TA喜欢火锅" → ("TA喜欢", "火锅", ""); "TA收藏了3张火锅的照片" → ("TA收藏了", "火锅", "的照片")
_SHAPES = (
    re.compile(r"^(TA(?:喜欢|去过|爱|在学|会))(.{1,8})()$"),
    re.compile(r"^(TA收藏了)\d+张(.{1,8})(的照片)$"),
)


def _merge(listed: list[tuple[str, str]]) -> list[dict[str, Any]]:
    groups: dict[tuple[str, str], list[tuple[str, str]]] = {}
    statements: list[dict[str, Any]] = []
    for ref, text in listed:
        match = next((m for p in _SHAPES if (m := p.match(text))), None)
        if match is None:
            statements.append({"text": text, "refs": [ref]})
            continue
        head, thing, tail = match.groups()
        groups.setdefault((head, tail), []).append((ref, thing))
    for (head, tail), items in groups.items():
        chunk: list[tuple[str, str]] = []
        for ref, thing in items:
            text = head + "、".join(t for _, t in [*chunk, (ref, thing)]) + tail
            if chunk and len(text) > STATEMENT_MAX_CHARS // 2:
                statements.append(_statement(head, tail, chunk))
                chunk = []
            chunk.append((ref, thing))
        if chunk:
            statements.append(_statement(head, tail, chunk))
    return statements


def _statement(head: str, tail: str, chunk: list[tuple[str, str]]) -> dict[str, Any]:
    return {"text": head + "、".join(t for _, t in chunk) + tail, "refs": [r for r, _ in chunk]}


class ScriptedConsolidator(FakeOpenAI):
    def _completion(self, body: dict[str, Any], item: Scripted) -> dict[str, Any]:  # type: ignore[override]
        system = str(body["messages"][0]["content"])
        if CONSOLIDATE_SYSTEM in system:
            listed = _LISTED.findall(str(body["messages"][-1]["content"]))
            answer: dict[str, Any] = {"statements": _merge(listed), "superseded": []}
        else:  # the teaching judge
            answer = {"op": "add", "replaces": []}
        text = json.dumps(answer, ensure_ascii=False)
        usage = (count_message_tokens(body["messages"]), count_tokens(text))  # as billed, roughly
        return FakeOpenAI._completion(body, Scripted(text=text, usage=usage))
