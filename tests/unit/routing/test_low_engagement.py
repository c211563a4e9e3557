from __future__ import annotations

import random
from typing import Any

import pytest

from pallas.routing import phrases
from pallas.routing.config import LowEngagementConfig
from pallas.routing.current_turn_decision import CurrentTurnAction
from pallas.routing.low_engagement import (
    build_pools,
    decide_low_engagement,
    emit_probability,
    is_clean_phrase,
)
from tests.unit.routing.helpers import FixedRandom

# Plain statements get silence by default; these tests exercise the statement pools.
CFG = LowEngagementConfig(statement_phrases=True)


def _decide(focus: str = "今天去公园散步了", *, config: LowEngagementConfig = CFG, **kwargs: Any):
    args: dict[str, Any] = {
        "action": CurrentTurnAction.PASS,
        "source": "rule",
        "addressed": False,
        "focus_text": focus,
        "recent_bot_replies": 0,
        "rng": FixedRandom(0.0),
    }
    args.update(kwargs)
    return decide_low_engagement(config, **args)


@pytest.mark.parametrize(
    ("count", "probability"),
    [(0, 0.35), (1, 0.20), (2, 0.20), (3, 0.10), (4, 0.10), (5, 0.05), (40, 0.05), (-1, 0.35)],
)
def test_probability_by_recent_bot_replies(count: int, probability: float) -> None:
    assert emit_probability(count, CFG) == probability


@pytest.mark.parametrize(
    ("kwargs", "reason"),
    [
        ({"action": CurrentTurnAction.REPLY}, "not_pass"),
        ({"source": "model"}, "not_rule_source"),
        ({"addressed": True}, "addressed"),
        ({"config": LowEngagementConfig(enabled=False)}, "disabled"),
        ({"rng": FixedRandom(0.35)}, "roll_miss"),
        ({"rng": FixedRandom(0.2), "recent_bot_replies": 1}, "roll_miss"),
        ({"rng": FixedRandom(0.19), "recent_bot_replies": 1}, "emit"),
        ({"rng": FixedRandom(0.34)}, "emit"),
    ],
)
def test_gate_and_roll(kwargs: dict[str, Any], reason: str) -> None:
    result = _decide(**kwargs)
    assert result.reason == reason
    assert result.emit is (reason == "emit")
    assert (result.phrase is not None) is result.emit


def test_emitted_phrase_is_short_and_from_soft_pools() -> None:
    for seed in range(50):
        result = _decide(
            rng=random.Random(seed),
            config=LowEngagementConfig(statement_phrases=True, probability_steps=((0, 1.0),)),
        )
        assert result.emit and result.phrase is not None
        assert len(result.phrase) <= 12
        assert result.pool in {"group", "soft"}
        assert result.phrase in phrases.SOFT_POOL


@pytest.mark.parametrize(
    "focus", ["真的难绷", "破防了家人们", "麻了", "好烦啊", "今天好累", "气死我了"]
)
def test_emotion_words_pick_the_tangent_pool(focus: str) -> None:
    result = _decide(focus)
    assert result.pool == "emotion"
    assert result.phrase in phrases.EMOTION_TANGENT_POOL


def test_never_repeats_the_last_phrase() -> None:
    rng = random.Random(11)
    config = LowEngagementConfig(
        statement_phrases=True, probability_steps=((0, 1.0),), soft_pool=("嗯嗯", "好耶")
    )
    last = None
    seen = []
    for _ in range(100):
        result = _decide(rng=rng, config=config, last_phrase=last)
        assert result.phrase != last
        last = result.phrase
        seen.append(last)
    assert set(seen) == {"嗯嗯", "好耶"}


def test_single_phrase_pool_falls_back_to_emoji_instead_of_repeating() -> None:
    config = LowEngagementConfig(statement_phrases=True, soft_pool=("嗯嗯",))
    result = _decide(config=config, last_phrase="嗯嗯")
    assert result.pool == "emoji"
    assert result.phrase in phrases.EMOJI_POOL


def test_no_phrase_when_every_pool_is_exhausted() -> None:
    config = LowEngagementConfig(
        statement_phrases=True,
        soft_pool=("嗯嗯",),
        emoji_pool=("嗯嗯",),
        use_group_expressions=False,
    )
    result = _decide(config=config, last_phrase="嗯嗯")
    assert (result.emit, result.reason) == (False, "no_phrase")


def test_group_expressions_join_the_pool() -> None:
    config = LowEngagementConfig(statement_phrases=True, soft_pool=())
    result = _decide(config=config, group_expressions=("确实可以",))
    assert (result.phrase, result.pool) == ("确实可以", "group")


def test_group_expressions_can_be_switched_off() -> None:
    config = LowEngagementConfig(statement_phrases=True, soft_pool=(), use_group_expressions=False)
    result = _decide(config=config, group_expressions=("确实可以",))
    assert result.pool == "emoji"


@pytest.mark.parametrize(
    ("phrase", "clean"),
    [
        ("嗯嗯", True),
        ("诶？", False),  # reads as a question in a stranger's chat
        ("喝口水吧", False),  # an instruction
        ("是这样呀", False),
        ("一二三四五六七八九十一二", True),
        ("一二三四五六七八九十一二三", False),
        ("你个傻逼", False),
        ("SB吧", False),
        ("滚", False),
        ("nmsl", False),
        ("[CQ:face,id=1]", False),
        ("看 https://x.cn", False),
        ("@全体成员", False),
        ("两行\n文字", False),
        ("   ", False),
    ],
)
def test_clean_phrase(phrase: str, clean: bool) -> None:
    assert is_clean_phrase(phrase, max_chars=12, blocklist=phrases.BLOCKLIST) is clean


def test_dirty_phrases_never_enter_any_pool() -> None:
    config = LowEngagementConfig(
        soft_pool=("嗯嗯", "你妈的", "去死吧"),
        emotion_pool=("抱抱", "废物"),
        emoji_pool=("🐮", "操"),
        extra_blocklist=("香菜",),
    )
    pools = build_pools(config, ("笑死 sb", "不吃香菜", "好耶"))
    assert pools == {
        "group": ("好耶",),
        "soft": ("嗯嗯",),
        "emotion": ("抱抱",),
        "emoji": ("🐮",),
        "good_news": phrases.GOOD_NEWS_POOL,
        "surprise": phrases.SURPRISE_POOL,
        "warm": phrases.WARM_POOL,
    }


def test_built_in_pools_are_clean() -> None:
    for pool in (
        phrases.SOFT_POOL,
        phrases.EMOTION_TANGENT_POOL,
        phrases.EMOJI_POOL,
        phrases.GOOD_NEWS_POOL,
        phrases.SURPRISE_POOL,
        phrases.WARM_POOL,
    ):
        for phrase in pool:
            assert is_clean_phrase(phrase, max_chars=12, blocklist=phrases.BLOCKLIST), phrase
