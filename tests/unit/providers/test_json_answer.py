"""The JSON in a model's answer, however the model wrapped it (`pallas.providers.json_answer`):
the extraction, the teaching judge, the consolidation, the expansion and the reminders' time
reader all read their answers through it."""

from __future__ import annotations

from typing import Any

import pytest

from pallas.providers.json_answer import json_object, json_payload

ANSWERS: list[tuple[str, str, Any]] = [
    ("bare object", '{"op": "add", "replaces": []}', {"op": "add", "replaces": []}),
    ("bare array", '[{"text": "喜欢猫"}]', [{"text": "喜欢猫"}]),
    ("code fence", '```json\n{"when": "2026-12-07 08:00"}\n```', {"when": "2026-12-07 08:00"}),
    ("fence without a language", '```\n{"a": 1}\n```', {"a": 1}),
    ("JSON fence", '```JSON\n{"a": 1}\n```', {"a": 1}),
    (
        "prose around",
        '好的，结果如下：{"op": "deny", "replaces": ["f1"]} 希望有帮助',
        {"op": "deny", "replaces": ["f1"]},
    ),
    ("prose, then a fence", '判断如下：\n```json\n{"a": [1, 2]}\n```\n以上。', {"a": [1, 2]}),
    ("think first", '<think>用户说 {不是JSON}</think>{"a": 1}', {"a": 1}),
    ("unclosed think", '<think>还在想 {"a": 1}', None),
    ("an object opening before an array", 'x {"facts": [1]} y', {"facts": [1]}),
    ("an array opening before an object", 'x [{"a": 1}] y', [{"a": 1}]),
    ("broken object, a whole array inside", '{"a": [1, 2] oops', [1, 2]),
    ("garbage", "好的～", None),
    ("unbalanced braces", "{not json}", None),
    ("closer before opener", '} {"a"', None),
    ("empty", "", None),
    ("only spaces", "   \n ", None),
    ("a bare string", '"update"', None),
    ("a bare number", "42", None),
]


@pytest.mark.parametrize(
    ("answer", "expected"), [a[1:] for a in ANSWERS], ids=[a[0] for a in ANSWERS]
)
def test_the_payload_of_an_answer(answer: str, expected: Any) -> None:
    assert json_payload(answer) == expected


@pytest.mark.parametrize(
    ("answer", "expected"), [a[1:] for a in ANSWERS], ids=[a[0] for a in ANSWERS]
)
def test_the_object_of_an_answer_is_the_payload_when_it_is_an_object(
    answer: str, expected: Any
) -> None:
    assert json_object(answer) == (expected if isinstance(expected, dict) else None)
