from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import pytest

from pallas.routing.config import AmbientConfig, TriggerConfig
from pallas.routing.triggers import (
    TriggerKind,
    command_text,
    detect_trigger,
    match_alias,
    roll_ambient,
    without_call,
)
from tests.unit.routing.helpers import ALIASES, BOB, BOT, T0, FixedRandom, turn

NO_AMBIENT = AmbientConfig(enabled=False)


def _detect(t: Any, *, ambient: AmbientConfig = NO_AMBIENT, **kwargs: Any):
    return detect_trigger(
        t,
        aliases=ALIASES,
        triggers=kwargs.pop("triggers", TriggerConfig()),
        ambient=ambient,
        now=kwargs.pop("now", T0),
        rng=kwargs.pop("rng", random.Random(1)),
        **kwargs,
    )


@pytest.mark.parametrize(
    ("turn_kwargs", "extra", "kind", "addressed", "width"),
    [
        ({"text": "你好", "at_bot": True}, {}, TriggerKind.AT, True, 8),
        ({"text": "", "at_bot": True}, {}, TriggerKind.AT, True, 8),
        ({"text": "在吗", "group": 0}, {}, TriggerKind.PRIVATE, True, 0),
        (
            {"text": "什么意思", "reply_to": 77, "reply_to_user": BOT},
            {},
            TriggerKind.REPLY_TO_BOT,
            True,
            8,
        ),
        (
            {"text": "什么意思", "reply_to": 77},
            {"bot_message_ids": {77}},
            TriggerKind.REPLY_TO_BOT,
            True,
            8,
        ),
        (
            {"text": "什么意思", "reply_to": 78},
            {"bot_message_ids": {77}},
            TriggerKind.NONE,
            False,
            0,
        ),
        ({"text": "牛牛早"}, {}, TriggerKind.ALIAS, True, 8),
        ({"text": "早安呀牛牛~"}, {}, TriggerKind.ALIAS, True, 8),
        ({"text": "pallas 你好"}, {}, TriggerKind.ALIAS, True, 8),
        ({"text": "今天牛牛好可爱"}, {}, TriggerKind.ALIAS, False, 8),
        (
            {"text": "那明天呢"},
            {"last_bot_reply_to_user_at": T0 - 30},
            TriggerKind.FOLLOW_UP,
            False,
            8,
        ),
        ({"text": "那明天呢"}, {"last_bot_reply_to_user_at": T0 - 91}, TriggerKind.NONE, False, 0),
        ({"text": "今天天气真不错"}, {}, TriggerKind.NONE, False, 0),
    ],
)
def test_trigger_kinds(
    turn_kwargs: dict[str, Any],
    extra: dict[str, Any],
    kind: TriggerKind,
    addressed: bool,
    width: int,
) -> None:
    result = _detect(turn(**turn_kwargs), **extra)
    assert result.kind is kind
    assert result.addressed is addressed
    assert result.timeline_width == width


@pytest.mark.parametrize(
    ("text", "position", "content"),
    [
        ("牛牛", "whole", ""),
        ("牛牛！", "whole", ""),
        ("牛牛，你在干嘛", "start", "你在干嘛"),
        ("@牛牛 在吗", "start", "在吗"),
        ("晚安牛牛", "end", "晚安"),
        ("谢谢你帕拉斯！", "end", "谢谢你"),
        ("PALLAS help", "start", "help"),
        ("我家牛牛今天好乖", "inside", "我家牛牛今天好乖"),
    ],
)
def test_alias_positions(text: str, position: str, content: str) -> None:
    match = match_alias(text, ALIASES)
    assert match is not None
    assert (match.position, match.content) == (position, content)


def test_alias_inside_ignored_when_not_anywhere() -> None:
    assert match_alias("我家牛牛今天好乖", ALIASES, anywhere=False) is None
    assert _detect(turn("我家牛牛今天好乖"), triggers=TriggerConfig(alias_anywhere=False)).kind is (
        TriggerKind.NONE
    )


def test_extra_aliases_from_config() -> None:
    cfg = TriggerConfig(extra_aliases=("小帕",))
    result = _detect(turn("小帕在吗"), triggers=cfg)
    assert result.kind is TriggerKind.ALIAS and result.addressed
    assert result.content_text == "在吗"


def test_content_text_strips_vocative_alias_and_other_mentions() -> None:
    assert _detect(turn("牛牛，闭嘴")).content_text == "闭嘴"
    assert _detect(turn("你看这个", at_users=(BOB,))).content_text == "你看这个"


def test_adapter_to_me_without_visible_signal_counts_as_alias() -> None:
    result = _detect(replace(turn("在吗"), to_me=True))
    assert result.kind is TriggerKind.ALIAS and result.addressed
    assert result.alias_position == "adapter"


def test_follow_up_only_for_the_same_window() -> None:
    result = _detect(turn("那明天呢"), last_bot_reply_to_user_at=T0 - 89)
    assert result.follow_up and not result.addressed


@pytest.mark.parametrize(
    ("times", "rolls", "fired", "reason"),
    [
        ((), (0.05,), True, "ambient_fired"),
        ((), (0.08,), False, "ambient_roll_miss"),
        ((T0 - 119,), (0.0,), False, "ambient_cooldown"),
        ((T0 - 121,), (0.0,), True, "ambient_fired"),
        ((T0 - 800, T0 - 500), (0.0,), False, "ambient_budget"),
        ((T0 - 950, T0 - 500), (0.0,), True, "ambient_fired"),
    ],
)
def test_ambient_roll(
    times: tuple[float, ...], rolls: tuple[float, ...], fired: bool, reason: str
) -> None:
    roll = roll_ambient(AmbientConfig(), now=T0, ambient_times=times, rng=FixedRandom(*rolls))
    assert (roll.fired, roll.reason) == (fired, reason)


def test_ambient_disabled_consumes_no_randomness() -> None:
    rng = random.Random(5)
    before = rng.getstate()
    assert roll_ambient(NO_AMBIENT, now=T0, ambient_times=(), rng=rng).reason == "ambient_disabled"
    assert rng.getstate() == before


def test_ambient_rate_is_about_eight_percent() -> None:
    rng = random.Random(20261129)
    fired = sum(
        roll_ambient(AmbientConfig(), now=T0, ambient_times=(), rng=rng).fired for _ in range(5000)
    )
    assert 300 <= fired <= 520  # 8 % of 5000 = 400


def test_ambient_trigger_gets_short_timeline() -> None:
    result = _detect(turn("今天天气真不错"), ambient=AmbientConfig(rate=1.0))
    assert result.kind is TriggerKind.AMBIENT
    assert result.timeline_width == 4
    assert not result.addressed


def test_no_ambient_for_bystander_messages() -> None:
    result = _detect(turn("你看这个", at_users=(BOB,)), ambient=AmbientConfig(rate=1.0))
    assert result.kind is TriggerKind.NONE
    assert result.reason == "ambient_not_eligible"


@pytest.mark.parametrize(
    ("text", "question"),
    [
        ("帕拉斯，我家猫叫什么", "我家猫叫什么"),  # a call at the start
        ("帕拉斯 你还记得我老家吗", "你还记得我老家吗"),
        ("我家猫叫什么 牛牛", "我家猫叫什么"),  # at the end
        ("@帕拉斯 我在哪上班来着", "我在哪上班来着"),
        ("牛牛\n我家猫叫什么", "我家猫叫什么"),  # a merged turn: the call on its own line
        ("帕拉斯，今天吃什么，火锅呢？", "今天吃什么，火锅呢？"),
        ("帕拉斯", ""),  # only the name: nothing asked
        ("帕拉斯有皮肤吗", "帕拉斯有皮肤吗"),  # asked about the character: the name stays
        ("我昨天跟牛牛说过", "我昨天跟牛牛说过"),  # talked about, inside the line
        ("我家猫叫什么", "我家猫叫什么"),  # no call
    ],
)
def test_retrieval_searches_without_the_call_of_the_bots_name(text: str, question: str) -> None:
    assert without_call(text, ("帕拉斯", "牛牛")) == question


@pytest.mark.parametrize(
    ("text", "command"),
    [
        ("帕拉斯，记住我喜欢猫", "记住我喜欢猫"),
        ("牛牛记住我喜欢猫", "记住我喜欢猫"),  # no separator: still a call
        ("  牛牛: 忘记我 ", "忘记我"),
        ("记住我喜欢猫，帕拉斯", "记住我喜欢猫"),  # a call at the end, set off
        ("十分钟后提醒我关火 牛牛~", "十分钟后提醒我关火"),
        ("记住我最喜欢帕拉斯", "记住我最喜欢帕拉斯"),  # joined to the end: what is said
        ("记住我家狗叫牛牛", "记住我家狗叫牛牛"),
        ("记住我最喜欢的角色是 帕拉斯", "记住我最喜欢的角色是 帕拉斯"),  # the object, set off
        ("记住我的外号叫，牛牛", "记住我的外号叫，牛牛"),
        ("记住我是做设计的，牛牛", "记住我是做设计的"),  # 的 closes the statement
        ("帕拉斯有皮肤吗", "帕拉斯有皮肤吗"),  # asked about
        ("我昨天跟牛牛说过", "我昨天跟牛牛说过"),
        ("帕拉斯", ""),
        ("记住我喜欢猫", "记住我喜欢猫"),
    ],
)
def test_a_command_keeps_what_it_says_without_the_call(text: str, command: str) -> None:
    assert command_text(text, ("帕拉斯", "牛牛")) == command
