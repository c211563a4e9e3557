from __future__ import annotations

from typing import Any

import pytest

from pallas.routing.config import NecessityConfig
from pallas.routing.reply_necessity import NecessityInput, score_reply_necessity

CFG = NecessityConfig()


def _score(text: str, **kwargs: Any):
    return score_reply_necessity(NecessityInput(text=text, **kwargs), CFG)


@pytest.mark.parametrize(
    ("text", "kwargs", "term", "weight"),
    [
        ("你好呀", {"addressed": True}, "to_me", 55),
        ("今天牛牛好可爱", {"mentioned": True}, "mention", 35),
        ("那明天呢", {"follow_up": True}, "follow_up", 25),
        ("大家今天都在做什么呢，有人一起打游戏吗", {"ambient": True}, "ambient", 50),
        ("帮我看看", {}, "request", 25),
        ("这是什么", {}, "question", 20),
        ("我也觉得", {"back_and_forth": True}, "back_and_forth", 15),
        ("你看这个", {"mentions_others": True}, "bystander", -45),
        ("哈哈哈", {}, "noise", -40),
        ("加我微信免费领", {}, "spam", -50),
        ("确实", {}, "short_reaction", -25),
        ("今天好热", {}, "low_social", -35),
        ("今天好热", {"recent_bot_replies": 2}, "recent_bot_replies", -16),
        ("今天好热", {"recent_bot_replies": 20}, "recent_bot_replies", -48),
        ("今天好热", {"affinity": 0.0}, "low_affinity", -30),
        ("今天好热", {"affinity": 0.25}, "low_affinity", -15),
    ],
)
def test_each_term(text: str, kwargs: dict[str, Any], term: str, weight: int) -> None:
    assert _score(text, **kwargs).weight_of(term) == weight


@pytest.mark.parametrize(
    ("text", "kwargs", "absent"),
    [
        ("你看这个", {"mentions_others": True, "addressed": True}, "bystander"),
        ("今天好热", {"follow_up": True}, "low_social"),
        ("今天好热", {"mentioned": True}, "low_social"),
        ("今天好热", {"affinity": 0.5}, "low_affinity"),
        ("今天好热", {"affinity": None}, "low_affinity"),
        ("这是什么", {}, "low_social"),
        ("那明天呢？", {"follow_up": True, "recent_bot_replies": 3}, "recent_bot_replies"),
    ],
)
def test_term_does_not_apply(text: str, kwargs: dict[str, Any], absent: str) -> None:
    assert _score(text, **kwargs).weight_of(absent) is None


def test_question_from_a_follow_up_is_exempt_from_recent_reply_penalty() -> None:
    result = _score("那明天呢？", follow_up=True, recent_bot_replies=3)
    assert result.weight_of("recent_bot_replies_exempt") == 0


@pytest.mark.parametrize(
    ("text", "kwargs", "score", "passed", "reason"),
    [
        ("这道题怎么做", {"addressed": True}, 75, True, "addressed"),
        ("哈哈哈", {"addressed": True}, 15, True, "addressed_override"),
        ("今天好热", {"addressed": True, "recent_bot_replies": 6}, 7, True, "addressed_override"),
        (
            "那明天几点开始",
            {"follow_up": True, "back_and_forth": True},
            60,
            True,
            "above_threshold",
        ),
        (
            "那我先去吃饭了",
            {"follow_up": True, "back_and_forth": True},
            40,
            False,
            "below_threshold",
        ),
        ("能不能帮我看看这段代码", {}, 45, False, "below_threshold"),
        ("有人知道这个怎么弄吗", {}, 20, False, "below_threshold"),
        ("今天好热", {}, -35, False, "below_threshold"),
        ("牛牛在干嘛呢", {"mentioned": True}, 55, True, "above_threshold"),
        (
            "刚刚看完那部电影，结局真的完全出乎意料，后劲好大，现在还缓不过来",
            {"ambient": True},
            50,
            True,
            "above_threshold",
        ),
        (
            "刚刚看完那部电影，结局真的完全出乎意料，后劲好大，现在还缓不过来",
            {"ambient": True, "recent_bot_replies": 1},
            42,
            False,
            "below_threshold",
        ),
    ],
)
def test_score_and_threshold(
    text: str, kwargs: dict[str, Any], score: int, passed: bool, reason: str
) -> None:
    result = _score(text, **kwargs)
    assert (result.score, result.passed, result.reason) == (score, passed, reason)
    assert result.score == sum(t.weight for t in result.terms)


def test_weights_and_threshold_come_from_config() -> None:
    cfg = NecessityConfig(question=40, threshold=40)
    result = score_reply_necessity(NecessityInput(text="有人知道这个怎么弄吗"), cfg)
    assert result.passed and result.score == 40


def test_hard_negative_flags_noise_spam_bystander() -> None:
    assert _score("哈哈哈").hard_negative
    assert _score("你看这个", mentions_others=True).hard_negative
    assert not _score("今天好热").hard_negative
