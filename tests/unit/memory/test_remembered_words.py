"""The naming words of what the bot remembers: what makes a later line the bot's business
(issue 32). Table of stored texts → words that must and must not be stake words."""

from __future__ import annotations

import pytest

from pallas.features.memory_commands import heading_of, stake_words


@pytest.mark.parametrize(
    ("text", "must", "must_not"),
    [
        ("TA在学日语", {"日语"}, {"ta", "在", "学"}),
        ("TA在学法语", {"法语"}, {"ta"}),  # jieba keeps 学法语 whole; the word inside counts
        ("TA养了一只猫叫土豆", {"土豆"}, {"一只"}),
        ("TA是做平面设计的", {"平面设计"}, {"是", "做"}),
        ("TA住在海淀区", {"海淀区", "海淀"}, {"住", "在"}),
        ("TA喜欢打羽毛球", {"羽毛球"}, {"喜欢", "打"}),
        ("TA对芒果过敏", {"芒果"}, set()),
        ("TA有一台PS5和Switch", {"ps5", "switch"}, {"一台"}),
        ("群里每周五晚上打狼人杀", set(), {"周五", "每周五", "晚上", "群里"}),  # time words
        ("群主下周要搬家到杭州", {"杭州"}, {"群主", "下周"}),
        ("TA的幸运数字是7", set(), {"数字", "7"}),
        ("", set(), set()),
    ],
)
def test_stake_words(text: str, must: set[str], must_not: set[str]) -> None:
    words = stake_words(text)
    assert must <= words, words
    assert not (must_not & words), words
    assert len(words) <= 8


@pytest.mark.parametrize(
    ("text", "heading"),
    [
        ("源石病：一种由源石引起的疾病", "源石病"),
        ("罗德岛干员守则：第一条，不许在走廊奔跑", "罗德岛干员守则"),
        ("没有标题的一段话，冒号在后面：这里", ""),
        ("：空标题", ""),
    ],
)
def test_heading_of_a_knowledge_chunk(text: str, heading: str) -> None:
    assert heading_of(text) == heading
