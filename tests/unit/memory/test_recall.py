"""A member's memory question answered from their own facts (pure part): which fact answers."""

from __future__ import annotations

import pytest

from pallas.features.memory_prompt.recall import best_answer, said_to_subject, second_person

FACTS = [
    "TA是做平面设计的",
    "TA家里狗子是只萨摩耶",
    "TA对芒果过敏",
    "TA周三晚上固定打羽毛球",
    "小王是TA的表哥",
    "TA住在海淀区",
]


@pytest.mark.parametrize(
    "question, answer",
    [
        ("我是做哪行的吗", "TA是做平面设计的"),  # by concept: 哪行 asks for a job
        ("我对什么过敏", "TA对芒果过敏"),
        ("我家狗是什么品种", "TA家里狗子是只萨摩耶"),
        ("我周三晚上干嘛", "TA周三晚上固定打羽毛球"),
        ("我表哥叫啥", "小王是TA的表哥"),
        ("我住哪", "TA住在海淀区"),
        # nothing answers it: the chat answers, with the facts in context
        ("我喜欢什么颜色", None),
        ("我生日是哪天", None),
    ],
)
def test_best_answer(question: str, answer: str | None) -> None:
    assert best_answer(question, FACTS) == answer


def test_two_facts_answering_alike_leave_it_to_the_chat() -> None:
    assert best_answer("我住哪", ["TA住在海淀区", "TA住在朝阳区"]) is None


def test_no_facts_no_answer() -> None:
    assert best_answer("我是做哪行的吗", []) is None


@pytest.mark.parametrize(
    "fact, said, listed",
    [
        ("TA是做平面设计的", "你是做平面设计的", "是做平面设计的"),
        ("小王是TA的表哥", "小王是你的表哥", "小王是你的表哥"),
    ],
)
def test_a_fact_said_back_to_its_subject(fact: str, said: str, listed: str) -> None:
    assert said_to_subject(fact) == said
    assert second_person(fact) == listed
