from __future__ import annotations

import pytest

from pallas.routing.text_signals import (
    SocialAction,
    classify_social_action,
    clean_text,
    has_emotion,
    is_incomplete,
    is_noise,
    is_question,
    is_request,
    is_short_reaction,
    is_shut_up,
    is_spam,
    meaningful_length,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("哈哈", True),
        ("哈哈哈哈哈", True),
        ("hhhh", True),
        ("www", True),
        ("23333", True),
        ("666", True),
        ("111", True),
        ("？？？", True),
        ("...", True),
        ("！！", True),
        ("😂😂😂", True),
        ("草草草", True),
        ("啊啊啊啊", True),
        ("呜呜呜", True),
        ("笑死", True),
        ("xswl", True),
        ("今天好热", False),
        ("哈哈你真逗", False),
        ("谢谢", False),
        ("好的", False),
        ("", False),
    ],
)
def test_noise(text: str, expected: bool) -> None:
    assert is_noise(text) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [("好", True), ("确实", True), ("嗯嗯", True), ("离谱！", True), ("好的呀我马上来", False)],
)
def test_short_reaction(text: str, expected: bool) -> None:
    assert is_short_reaction(text) is expected


@pytest.mark.parametrize(
    ("text", "question", "asks"),
    [
        ("这个怎么弄", True, False),
        ("明天几点开会", True, False),
        ("你吃了吗", True, False),
        ("真的？", True, False),
        ("帮我看看这个", False, True),
        ("能不能推荐一首歌", True, True),
        ("今天天气不错", False, False),
        ("那x趋于无穷的时候sinx/x呢", True, False),
        ("你呢", True, False),
        ("你多大了", True, False),
        ("1+1等于几", True, False),
        ("我也是呢", False, False),
    ],
)
def test_question_and_request(text: str, question: bool, asks: bool) -> None:
    assert is_question(text) is question
    assert is_request(text) is asks


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("加我微信免费领皮肤", True),
        ("扫码进群", True),
        ("看看这个 https://example.com/a/very/long/link/for/spam", True),
        ("https://a.cn", False),
        ("今天天气不错", False),
    ],
)
def test_spam(text: str, expected: bool) -> None:
    assert is_spam(text) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("我觉得", True),
        ("我觉得…", True),
        ("那个", True),
        ("请问", True),
        ("我今天去了超市然后", True),
        ("如果明天下雨的话", True),
        ("等一下，", True),
        ("我觉得这个不行", False),
        ("然后呢？", False),
        ("", False),
    ],
)
def test_incomplete(text: str, expected: bool) -> None:
    assert is_incomplete(text) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("闭嘴", True),
        ("闭嘴！", True),
        ("你能不能安静点", True),
        ("别说话了", True),
        ("别吵", True),
        ("滚", True),
        ("shut up", True),
        ("别闭嘴", False),
        ("不安静", False),
        # a description is not an order (issue 32: "牛牛好安静" silenced the bot)
        ("好安静", False),
        ("好安静啊", False),
        ("你怎么这么安静", False),
        ("都给我安静点", True),
        ("你安静一下", True),
        ("今天晚上的图书馆特别特别安静，适合学习", False),
        ("你好", False),
    ],
)
def test_shut_up(text: str, expected: bool) -> None:
    assert is_shut_up(text) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [("好烦啊", True), ("破防了", True), ("EMO了", True), ("气死我了", True), ("吃饭去", False)],
)
def test_emotion(text: str, expected: bool) -> None:
    assert has_emotion(text) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("早", SocialAction.GREETING),
        ("早上好呀", SocialAction.GREETING),
        ("在吗", SocialAction.GREETING),
        ("晚安~", SocialAction.GREETING),
        ("谢谢", SocialAction.THANKS),
        ("辛苦了", SocialAction.THANKS),
        ("烦死了", SocialAction.VENTING),
        ("唉", SocialAction.VENTING),
        ("累死了今天", SocialAction.VENTING),
        ("笨蛋", SocialAction.TEASING),
        ("摸摸", SocialAction.TEASING),
        ("你是笨蛋吗", SocialAction.TEASING),
        ("好的", SocialAction.ACK),
        ("哈哈哈", SocialAction.ACK),
        ("这道题怎么做", SocialAction.NONE),
        ("帮我查一下天气", SocialAction.NONE),
        ("烦死了这个bug到底要怎么修啊", SocialAction.NONE),
        ("今天加班到十点，老板还让我周末来公司，真的是受够了这种日子了", SocialAction.NONE),
        ("我今天去看了电影", SocialAction.NONE),
    ],
)
def test_social_action(text: str, expected: SocialAction) -> None:
    assert classify_social_action(text) is expected


def test_nickname_only_is_social_nickname() -> None:
    assert classify_social_action("", alias_only=True) is SocialAction.NICKNAME


def test_venting_limit_is_configurable() -> None:
    assert classify_social_action("烦死了", venting_max_chars=2) is SocialAction.NONE


def test_clean_text_strips_mentions_and_codes() -> None:
    assert clean_text("@u1002 看[CQ:face,id=1]这个\u200b", strip_mentions=True) == "看这个"
    assert meaningful_length("你好，world!") == 7
