"""Recognition questions keep the model on the current image (no timeline images added)."""

from __future__ import annotations

import pytest

from pallas.context.recognition_question import is_recognition_question, recognition_question_match

RECOGNITION = [
    "这是谁",
    "这是谁啊？",
    "这谁",
    "这谁啊",
    "谁啊这是",
    "谁呀这是？？",
    "这个是谁",
    "这人是谁",
    "这位是谁呀",
    "图里的人是谁",
    "这是什么",
    "这是啥",
    "这啥",
    "这是啥玩意",
    "啥玩意这是",
    "这是什么东西",
    "这是什么意思",
    "啥梗",
    "这是什么梗",
    "哪个梗啊",
    "这梗是啥",
    "这是哪",
    "这是哪里",
    "这是在哪",
    "出自哪",
    "这图出自哪里",
    "求出处",
    "这图是啥",
    "这张图是什么",
    "这角色叫什么",
    "这首歌叫什么",
    "这是哪个干员",
    "这是哪部番",
    "哪部番里的",
    "@牛牛 这 是 谁",
    "牛牛，这是什么？[图片]",
    "有人认识这是谁吗",
    "what is this",
    "Who's this?",
]

ORDINARY = [
    "今天吃什么",
    "吃什么好呢",
    "你是谁",
    "我是谁",
    "你叫什么名字",
    "为什么",
    "这是为什么",
    "这是为啥啊",
    "这是什么时候的事",
    "你这是干什么",
    "这谁顶得住啊",
    "这谁受得了",
    "什么时候开会",
    "几点了",
    "明天去哪玩",
    "这附近哪有好吃的",
    "这周末去哪",
    "牛牛在干什么",
    "谁在线",
    "谁要一起打游戏",
    "这图好看",
    "这图真不错",
    "这个怎么用",
    "这个多少钱",
    "哈哈哈哈",
    "好耶",
    "有什么推荐的游戏吗",
    "[图片]",
    "",
    "what time is it",
]


@pytest.mark.parametrize("text", RECOGNITION)
def test_recognition_questions_are_detected(text: str) -> None:
    assert is_recognition_question(text), text


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_messages_are_not_recognition_questions(text: str) -> None:
    assert not is_recognition_question(text), recognition_question_match(text)


def test_tables_are_big_enough_both_ways() -> None:
    assert len(RECOGNITION) >= 20 and len(ORDINARY) >= 20


def test_match_names_the_rule_for_traces() -> None:
    match = recognition_question_match("啥梗")
    assert match is not None and match.rule == "meme_or_source"
    match = recognition_question_match("谁啊这是")
    assert match is not None and match.rule == "inverted"
    match = recognition_question_match("这角色叫什么")
    assert match is not None and match.rule == "pointed_question"
    assert recognition_question_match("今天吃什么") is None


def test_placeholder_urls_do_not_create_false_matches() -> None:
    # A URL query like ?what=this must not turn a plain message into a recognition question.
    assert not is_recognition_question("好看 [图片]:url=http://x.cn/a?who_is_this=1&zhe=shi")
