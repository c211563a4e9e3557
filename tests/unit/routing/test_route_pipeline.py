"""The pure pipeline over a state snapshot: which stage stops a turn, and why."""

from __future__ import annotations

import random
from typing import Any

import pytest

from pallas.product.llm.routing.config import (
    AmbientConfig,
    GateConfig,
    LowEngagementConfig,
    RoutingConfig,
)
from pallas.product.llm.routing.route_pipeline import RouteExtras, RouteOutcome, evaluate_route
from pallas.product.llm.routing.route_state import BotReply, RouteState
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
        ("那我先去吃饭了", ANSWERED_ALICE, {}, "low_engagement", RouteOutcome.PASS_PHRASE),
        ("那明天几点开始？", ANSWERED_ALICE, {}, "decision", RouteOutcome.REPLY),
        ("加我微信免费领皮肤", ANSWERED_ALICE, {}, "necessity", RouteOutcome.SKIP),
        (
            "你好",
            RouteState(last_turn_at=T0 - 1),
            {"at_bot": True},
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
    assert result.necessity is not None and result.necessity.hard_negative
    assert (result.stage, result.outcome) == ("necessity", RouteOutcome.SKIP)


def test_ambient_low_social_goes_to_pass_not_llm() -> None:
    config = BASE.model_copy(update={"ambient": AmbientConfig(rate=1.0)})
    result = _route("今天好热啊", config=config)
    assert result.trigger.is_ambient
    assert result.outcome is RouteOutcome.PASS_PHRASE


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
    assert cold.outcome is RouteOutcome.PASS_PHRASE


def test_quote_needs_the_necessity_pass_and_a_candidate() -> None:
    state = RouteState(candidates=(777,))
    hit = _route("这个什么意思", state, at_bot=True, reply_to=777, rng=FixedRandom(0.0))
    assert hit.outcome is RouteOutcome.QUOTE
    plain = _route("这个什么意思", RouteState(), at_bot=True, reply_to=777, rng=FixedRandom(0.0))
    assert plain.outcome is RouteOutcome.REPLY
