from __future__ import annotations

from typing import Any

import pytest

from pallas.routing.config import ShortSocialConfig
from pallas.routing.current_turn_decision import (
    CurrentTurnAction,
    CurrentTurnDecisionInput,
    DeliveryStyle,
    decide_current_turn_by_rule,
)
from pallas.routing.reply_targets import QuoteDecision
from pallas.routing.text_signals import SocialAction
from pallas.routing.triggers import TriggerKind

A = CurrentTurnAction
S = SocialAction
QUOTE_HIT = QuoteDecision(True, "quote", 555, 0.1)
QUOTE_MISS = QuoteDecision(False, "quote_roll_miss", None, 0.9)


def _decide(text: str, **kwargs: Any):
    return decide_current_turn_by_rule(CurrentTurnDecisionInput(text=text, **kwargs))


@pytest.mark.parametrize(
    ("text", "kwargs", "action", "social", "reason"),
    [
        # addressed
        ("这道题怎么做", {"addressed": True}, A.REPLY, S.NONE, "rule_reply"),
        ("早", {"addressed": True}, A.REPLY, S.GREETING, "rule_reply_short_social"),
        ("烦死了", {"addressed": True}, A.REPLY, S.VENTING, "rule_reply_short_social"),
        ("笨蛋", {"addressed": True}, A.REPLY, S.TEASING, "rule_reply_short_social"),
        ("", {"addressed": True}, A.FOLLOW_UP, S.NICKNAME, "rule_follow_up_bare_address"),
        ("？？", {"addressed": True}, A.FOLLOW_UP, S.NICKNAME, "rule_follow_up_bare_address"),
        ("", {"addressed": True, "has_image": True}, A.REPLY, S.NONE, "rule_reply"),
        ("", {"addressed": True, "has_sticker": True}, A.REPLY, S.ACK, "rule_reply_short_social"),
        ("我觉得", {"addressed": True}, A.FOLLOW_UP, S.NONE, "rule_follow_up_incomplete"),
        ("如果明天下雨的话", {"addressed": True}, A.FOLLOW_UP, S.NONE, "rule_follow_up_incomplete"),
        (
            "早",
            {"addressed": True, "necessity_passed": False},
            A.REPLY,
            S.GREETING,
            "rule_reply_short_social",
        ),
        # tools
        (
            "现在几点",
            {"addressed": True, "tool_requested": True, "tool_permitted": True},
            A.TOOL,
            S.NONE,
            "rule_tool",
        ),
        (
            "现在几点",
            {"addressed": True, "tool_requested": True},
            A.REPLY,
            S.NONE,
            "rule_reply_tool_not_permitted",
        ),
        (
            "现在几点",
            {"tool_requested": True, "tool_permitted": True, "necessity_passed": False},
            A.PASS,
            S.NONE,
            "rule_pass_low_necessity",
        ),
        # not addressed: follow-up / mention / ambient
        (
            "谢谢牛牛",
            {"trigger": TriggerKind.FOLLOW_UP},
            A.PASS,
            S.THANKS,
            "rule_pass_short_social",
        ),
        ("早上好", {"trigger": TriggerKind.AMBIENT}, A.PASS, S.GREETING, "rule_pass_short_social"),
        ("那我先去吃饭了", {"necessity_passed": False}, A.PASS, S.NONE, "rule_pass_low_necessity"),
        ("那明天几点开始呢", {"trigger": TriggerKind.FOLLOW_UP}, A.REPLY, S.NONE, "rule_reply"),
        # quote
        (
            "什么意思",
            {"addressed": True, "reply_to_message_id": 555, "quote": QUOTE_HIT},
            A.QUOTE,
            S.NONE,
            "rule_reply_quote",
        ),
        (
            "什么意思",
            {"addressed": True, "reply_to_message_id": 555, "quote": QUOTE_MISS},
            A.REPLY,
            S.NONE,
            "rule_reply",
        ),
    ],
)
def test_decision_table(
    text: str, kwargs: dict[str, Any], action: CurrentTurnAction, social: SocialAction, reason: str
) -> None:
    decision = _decide(text, **kwargs)
    assert (decision.action, decision.social_action, decision.reason) == (action, social, reason)
    assert decision.source == "rule"


def test_quote_carries_target_and_delivery_style() -> None:
    decision = _decide("什么意思", addressed=True, reply_to_message_id=555, quote=QUOTE_HIT)
    assert decision.delivery_style is DeliveryStyle.QUOTE
    assert decision.reply_message_id == 555
    assert decision.calls_llm


def test_quote_miss_falls_back_to_plain_with_reason() -> None:
    decision = _decide("什么意思", addressed=True, reply_to_message_id=555, quote=QUOTE_MISS)
    assert decision.delivery_style is DeliveryStyle.PLAIN
    assert decision.reply_message_id is None
    assert decision.quote_reason == "quote_roll_miss"


def test_an_addressed_turn_is_never_passed() -> None:
    for text in ("早", "哈哈哈", "好的", "谢谢", "烦", "", "今天好热"):
        decision = _decide(text, addressed=True, necessity_passed=False)
        assert decision.action is not CurrentTurnAction.PASS, text


@pytest.mark.parametrize(
    ("text", "recent", "memory", "pair"),
    [
        ("早", False, False, False),
        ("早", True, False, True),
        ("烦死了", True, False, True),
        ("唉", False, False, False),
        ("笨蛋", True, False, True),
        ("", True, False, True),  # bare @ / only the name
        ("这道题怎么做", True, True, False),
        ("这周末的活动具体是几点在哪里集合呀", False, True, False),
    ],
)
def test_short_social_trims_memory_and_keeps_recent_pair(
    text: str, recent: bool, memory: bool, pair: bool
) -> None:
    decision = _decide(text, addressed=True, bot_recently_replied_to_user=recent)
    assert decision.allow_persistent_memory is memory
    assert decision.include_recent_pair is pair


def test_long_venting_is_not_short_social() -> None:
    text = "烦死了今天加班到十点老板还要我周末去公司真的不想干了啊啊啊"
    decision = _decide(text, addressed=True)
    assert decision.social_action is SocialAction.NONE
    assert decision.allow_persistent_memory


def test_venting_limit_from_config() -> None:
    inp = CurrentTurnDecisionInput(text="烦死了", addressed=True)
    decision = decide_current_turn_by_rule(inp, ShortSocialConfig(venting_max_chars=2))
    assert decision.allow_persistent_memory


def test_timeline_width_passes_through() -> None:
    decision = _decide("这道题怎么做", addressed=True, timeline_width=8)
    assert decision.timeline_width == 8
    assert _decide("早上好", trigger=TriggerKind.AMBIENT, timeline_width=4).timeline_width == 4
