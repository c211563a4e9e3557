from __future__ import annotations

import random
from typing import Any

import pytest

from pallas.routing.config import AmbientConfig, GateConfig, TriggerConfig
from pallas.routing.reply_gate import GateVerdict, evaluate_reply_gate
from pallas.routing.triggers import detect_trigger
from tests.unit.routing.helpers import ALIASES, BOB, BOT, T0, turn

FOLLOW = {"last_bot_reply_to_user_at": T0 - 10}


def _gate(turn_kwargs: dict[str, Any], ctx: dict[str, Any] | None = None, **cfg: Any):
    t = turn(**turn_kwargs)
    trig = detect_trigger(
        t,
        aliases=ALIASES,
        triggers=TriggerConfig(),
        ambient=AmbientConfig(enabled=False),
        now=T0,
        rng=random.Random(1),
        **(ctx or {}),
    )
    return evaluate_reply_gate(t, trig, GateConfig(**cfg), rng=random.Random(3))


@pytest.mark.parametrize(
    ("turn_kwargs", "ctx", "verdict", "reason"),
    [
        # not addressed: the hard filter applies
        ({"text": "哈哈"}, None, GateVerdict.SKIP, "noise"),
        ({"text": "666"}, None, GateVerdict.SKIP, "noise"),
        ({"text": "？？？"}, None, GateVerdict.SKIP, "noise"),
        ({"text": "哈哈哈哈"}, FOLLOW, GateVerdict.SKIP, "noise"),
        ({"faces": 2}, None, GateVerdict.SKIP, "face"),
        ({"mface": True}, None, GateVerdict.SKIP, "face"),
        ({"image": True}, None, GateVerdict.SKIP, "face"),
        ({"text": ""}, None, GateVerdict.SKIP, "empty"),
        ({"text": "你看这个", "at_users": (BOB,)}, None, GateVerdict.SKIP, "bystander"),
        ({"text": "在吗", "at_users": (BOB,)}, FOLLOW, GateVerdict.SKIP, "bystander"),
        ({"text": "好的"}, None, GateVerdict.SKIP, "short"),
        ({"text": "好的"}, FOLLOW, GateVerdict.SKIP, "short"),
        ({"text": "我觉得"}, None, GateVerdict.SKIP, "incomplete"),
        ({"text": "我觉得吧，"}, FOLLOW, GateVerdict.DEFER, "incomplete"),
        ({"text": "话说牛牛，"}, None, GateVerdict.DEFER, "incomplete"),
        ({"text": "今天天气真不错"}, None, GateVerdict.PROCEED, "content"),
        # shut-up: addressed or right after the bot answered this member
        ({"text": "牛牛闭嘴"}, None, GateVerdict.SKIP, "shut_up"),
        ({"text": "安静点", "at_bot": True}, None, GateVerdict.SKIP, "shut_up"),
        ({"text": "别说话了"}, FOLLOW, GateVerdict.SKIP, "shut_up"),
        ({"text": "你们都别说话了"}, None, GateVerdict.PROCEED, "content"),
        # addressed: never dropped by noise / short / incomplete / media rules
        ({"text": "你好", "at_bot": True}, None, GateVerdict.PROCEED, "addressed"),
        ({"text": "哈哈", "at_bot": True}, None, GateVerdict.PROCEED, "addressed"),
        ({"text": "？", "at_bot": True}, None, GateVerdict.PROCEED, "addressed"),
        ({"text": "我觉得", "at_bot": True}, None, GateVerdict.PROCEED, "addressed"),
        (
            {"text": "在", "reply_to": 5, "reply_to_user": BOT},
            None,
            GateVerdict.PROCEED,
            "addressed",
        ),
        ({"text": "", "at_bot": True}, None, GateVerdict.PROCEED, "bare_address"),
        ({"text": "牛牛"}, None, GateVerdict.PROCEED, "bare_address"),
        ({"image": True, "at_bot": True}, None, GateVerdict.PROCEED, "addressed_media"),
        ({"faces": 1, "at_bot": True}, None, GateVerdict.PROCEED, "addressed"),
        (
            {"text": "你看", "at_bot": True, "at_users": (BOB,)},
            None,
            GateVerdict.PROCEED,
            "addressed",
        ),
    ],
)
def test_gate_table(
    turn_kwargs: dict[str, Any], ctx: dict[str, Any] | None, verdict: GateVerdict, reason: str
) -> None:
    result = _gate(turn_kwargs, ctx)
    assert (result.verdict, result.reason) == (verdict, reason)


def test_shut_up_draws_a_silence_period_within_range() -> None:
    durations = set()
    for seed in range(30):
        t = turn("牛牛闭嘴")
        trig = detect_trigger(
            t,
            aliases=ALIASES,
            triggers=TriggerConfig(),
            ambient=AmbientConfig(),
            now=T0,
            rng=random.Random(seed),
        )
        result = evaluate_reply_gate(t, trig, GateConfig(), rng=random.Random(seed))
        assert result.silence_s is not None and 30 <= result.silence_s <= 300
        durations.add(round(result.silence_s))
    assert len(durations) > 10  # drawn, not a constant


def test_only_shut_up_carries_a_silence() -> None:
    assert _gate({"text": "哈哈"}).silence_s is None


def test_min_chars_is_configurable() -> None:
    assert _gate({"text": "好的呀"}).verdict is GateVerdict.PROCEED
    assert _gate({"text": "好的呀"}, min_chars=4).reason == "short"


def test_media_only_can_be_let_through_by_config() -> None:
    assert _gate({"image": True}, skip_media_only=False).verdict is GateVerdict.PROCEED


def test_bystander_rule_can_be_disabled() -> None:
    result = _gate({"text": "你看这个", "at_users": (BOB,)}, skip_bystander=False)
    assert result.verdict is GateVerdict.PROCEED
