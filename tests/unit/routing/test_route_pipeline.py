"""The pure pipeline over a state snapshot: which stage stops a turn, and why."""

from __future__ import annotations

import random
from typing import Any

import pytest

from pallas.routing.ambient_stake import RecentLine
from pallas.routing.config import AmbientConfig, GateConfig, LowEngagementConfig, RoutingConfig
from pallas.routing.evaluate import RouteExtras, RouteOutcome, evaluate_route
from pallas.routing.route_state import BotReply, RouteState
from tests.unit.routing.helpers import ALIASES, ALICE, BOB, T0, FixedRandom, turn

EMPTY = RouteState()
BASE = RoutingConfig(
    ambient=AmbientConfig(enabled=False),
    low_engagement=LowEngagementConfig(probability_steps=((0, 1.0),)),
)
ANSWERED_ALICE = RouteState(bot_replies=(BotReply(T0 - 20, ALICE, "reply"),))


def _route(text: str, state: RouteState = EMPTY, config: RoutingConfig = BASE, **kw: Any):
    extras = kw.pop("extras", None)
    rng = kw.pop("rng", random.Random(2))
    return evaluate_route(
        turn(text, **kw), config, state, aliases=ALIASES, now=T0, rng=rng, extras=extras
    )


@pytest.mark.parametrize(
    ("text", "state", "kwargs", "stage", "outcome"),
    [
        ("哈哈", RouteState(), {}, "gate", RouteOutcome.SKIP),
        ("今天好热", RouteState(), {}, "necessity", RouteOutcome.SKIP),
        ("今天牛牛好可爱", RouteState(), {}, "low_engagement", RouteOutcome.PASS_PHRASE),
        ("谢谢你呀", ANSWERED_ALICE, {}, "low_engagement", RouteOutcome.PASS_PHRASE),
        ("谢谢你呀", ANSWERED_ALICE, {"user": BOB}, "necessity", RouteOutcome.SKIP),
        # issue 13: a plain statement gets silence, not a phrase
        ("那我先去吃饭了", ANSWERED_ALICE, {}, "low_engagement", RouteOutcome.PASS_SILENT),
        ("那明天几点开始？", ANSWERED_ALICE, {}, "decision", RouteOutcome.REPLY),
        # issue 13: an ad is cut by the stake rules before necessity
        ("加我微信免费领皮肤", ANSWERED_ALICE, {}, "stake", RouteOutcome.SKIP),
        # an @ during the group's cooldown is answered at once; other lines wait it out
        ("你好", RouteState(last_turn_at=T0 - 1), {"at_bot": True}, "decision", RouteOutcome.REPLY),
        (
            "那明天几点开始？",
            RouteState(last_turn_at=T0 - 1, bot_replies=(BotReply(T0 - 20, ALICE, "reply"),)),
            {},
            "cooldown",
            RouteOutcome.ACCUMULATE,
        ),
        ("今天好热", RouteState(silenced_until=T0 + 9), {}, "cooldown", RouteOutcome.SKIP),
    ],
)
def test_stage_that_decides(
    text: str, state: RouteState, kwargs: dict[str, Any], stage: str, outcome: RouteOutcome
) -> None:
    result = _route(text, state, **kwargs)
    assert (result.stage, result.outcome) == (stage, outcome)


def test_pass_phrase_makes_no_llm_call_and_is_short() -> None:
    result = _route("今天牛牛好可爱")
    assert not result.calls_llm
    assert result.phrase is not None and len(result.phrase) <= 12


def test_bystander_stays_silent_even_when_the_gate_lets_it_through() -> None:
    config = BASE.model_copy(update={"gate": GateConfig(skip_bystander=False)})
    result = _route("你也觉得这个可以吗", ANSWERED_ALICE, config, at_users=(BOB,))
    # issue 13: talking to another member is a member thread for the stake rules
    assert (result.stage, result.reason, result.outcome) == (
        "stake",
        "member_thread",
        RouteOutcome.SKIP,
    )


def test_ambient_low_social_gets_neither_llm_nor_phrase() -> None:
    config = BASE.model_copy(update={"ambient": AmbientConfig(rate=1.0)})
    result = _route("今天好热啊", config=config)
    assert result.trigger.is_ambient
    # issue 13: a plain statement is no stake (before: a PASS phrase)
    assert (result.stage, result.reason, result.outcome) == ("stake", "no_stake", RouteOutcome.SKIP)


def test_ambient_good_news_may_get_a_good_news_phrase() -> None:
    config = BASE.model_copy(update={"ambient": AmbientConfig(rate=1.0)})
    result = _route("我六级过了", config=config)
    assert result.trigger.is_ambient and result.stake is not None
    assert result.stake.reason == "emotion"
    assert result.outcome is RouteOutcome.PASS_PHRASE
    assert result.low_engagement is not None and result.low_engagement.pool == "good_news"


def test_tool_turn_with_permission() -> None:
    extras = RouteExtras(tool_requested=True, tool_permitted=True)
    result = _route("这是谁", at_bot=True, image=True, extras=extras)
    assert result.outcome is RouteOutcome.TOOL


def test_tool_turn_without_permission_is_a_plain_reply() -> None:
    extras = RouteExtras(tool_requested=True, tool_permitted=False)
    result = _route("这是谁", at_bot=True, image=True, extras=extras)
    assert (result.outcome, result.reason) == (RouteOutcome.REPLY, "rule_reply_tool_not_permitted")


def test_low_affinity_can_keep_a_soft_trigger_below_threshold() -> None:
    question = "那明天几点开始？"
    assert _route(question, ANSWERED_ALICE).outcome is RouteOutcome.REPLY
    cold = _route(question, ANSWERED_ALICE, extras=RouteExtras(affinity=0.0))
    assert cold.necessity is not None and cold.necessity.weight_of("low_affinity") == -30
    # issue 13: a question never gets a phrase (before: PASS_PHRASE)
    assert cold.outcome is RouteOutcome.PASS_SILENT
    assert cold.low_engagement is not None and cold.low_engagement.reason == "question"


def test_quote_needs_the_necessity_pass_and_a_candidate() -> None:
    state = RouteState(candidates=(777,))
    hit = _route("这个什么意思", state, at_bot=True, reply_to=777, rng=FixedRandom(0.0))
    assert hit.outcome is RouteOutcome.QUOTE
    plain = _route("这个什么意思", RouteState(), at_bot=True, reply_to=777, rng=FixedRandom(0.0))
    assert plain.outcome is RouteOutcome.REPLY


def _others_since_answer(count: int) -> RouteState:
    """Alice was answered 20 s ago; `count` lines of other members came after it."""
    lines = tuple(RecentLine(T0 - 19 + i, BOB + i % 3, "哈哈哈哈") for i in range(count))
    return RouteState(bot_replies=(BotReply(T0 - 20, ALICE, "reply"),), recent_lines=lines)


@pytest.mark.parametrize(
    ("others", "anchored"),
    [(0, True), (5, True), (6, False), (8, False)],
)
def test_a_busy_group_moves_on_from_a_follow_up(others: int, anchored: bool) -> None:
    state = _others_since_answer(others)
    assert (state.follow_up_anchor(ALICE, 6) is not None) is anchored
    result = _route("那明天几点开始？", state)
    assert result.trigger.follow_up is anchored
    assert result.calls_llm is anchored, "after the group moved on, her question is the group's"


def test_her_own_lines_do_not_end_the_follow_up() -> None:
    lines = tuple(RecentLine(T0 - 19 + i, ALICE, "对了") for i in range(8))
    state = RouteState(bot_replies=(BotReply(T0 - 20, ALICE, "reply"),), recent_lines=lines)
    assert state.follow_up_anchor(ALICE, 6) == T0 - 20
