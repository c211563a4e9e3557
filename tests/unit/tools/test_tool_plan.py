"""Tool planning: which tool a message asks for, who may use it, what the model is told."""

from __future__ import annotations

import random

import pytest

from pallas.core.turn import Sender, TurnInput
from pallas.features.tools.config import ToolsConfig
from pallas.features.tools.registry import default_registry
from pallas.features.tools.service import (
    NO_TOOL,
    NOT_PERMITTED_RESULT,
    NOT_PERMITTED_RULE,
    TOOL_FAILED_RULE,
    TOOL_RESULT_RULE,
    ToolPlan,
    plan_tool,
    plan_turn_tool,
    run_planned_tool,
    tool_request_text,
)

ALIASES = ("牛牛", "帕拉斯")
REGISTRY = default_registry()


def _turn(text: str, *, mentions: tuple[int, ...] = ()) -> TurnInput:
    return TurnInput(
        bot_id=1, group_id=2, user_id=3, message_id=4, time=0.0, text=text, mentions=mentions
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("牛牛，掷个骰子", "掷个骰子"),
        ("帕拉斯 算一下 1+1", "算一下 1+1"),
        ("帮我选：火锅还是烧烤 牛牛", "帮我选：火锅还是烧烤"),
        ("今天牛牛好可爱", "今天牛牛好可爱"),  # a name inside a sentence is kept
        ("   ", ""),
        ("长" * 301, ""),  # an essay is conversation, not a tool request
    ],
)
def test_request_text_drops_the_vocative_name(text: str, expected: str) -> None:
    assert tool_request_text(_turn(text), ALIASES) == expected


@pytest.mark.parametrize(
    ("text", "config", "is_admin", "tool", "permitted", "reason"),
    [
        ("掷个骰子", ToolsConfig(), False, "dice", True, "selected"),
        ("算一下 12*34", ToolsConfig(), False, "calc", True, "selected"),
        ("算一下 12*34", ToolsConfig(allowed=("dice",)), False, "calc", False, "not_allowed"),
        ("今天谁最活跃", ToolsConfig(admin_only=("activity",)), False, "activity", False,
         "admin_only"),
        ("今天谁最活跃", ToolsConfig(admin_only=("activity",)), True, "activity", True,
         "selected"),
        ("掷个骰子", ToolsConfig(enabled=False), True, None, False, "disabled"),
        ("今天天气不错", ToolsConfig(), False, None, False, "none"),
        ("骰子游戏好玩吗", ToolsConfig(), False, None, False, "none"),
    ],
)  # fmt: skip
def test_plan_detects_the_tool_and_checks_permission(
    text: str,
    config: ToolsConfig,
    is_admin: bool,
    tool: str | None,
    permitted: bool,
    reason: str,
) -> None:
    plan = plan_tool(text, config, REGISTRY, is_admin=is_admin)
    assert (plan.call.name if plan.call else None, plan.permitted, plan.reason) == (
        tool,
        permitted,
        reason,
    )
    assert plan.requested is (tool is not None)


def test_unknown_tool_names_in_config_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown tools"):
        ToolsConfig(allowed=("dice", "weather"))


async def _run(plan: ToolPlan, text: str = "掷个骰子", *, tool_turn: bool = True):
    return await run_planned_tool(
        plan,
        REGISTRY,
        tool_turn=tool_turn,
        turn=_turn(text),
        now=1_795_900_000.0,
        rng=random.Random(7),
        activity=None,
        timeout_s=2.0,
    )


async def test_no_tool_adds_nothing_to_the_prompt() -> None:
    context = await _run(NO_TOOL)
    assert context.results == () and context.rules == () and context.trace is None


async def test_permitted_tool_does_not_run_when_routing_chose_another_action() -> None:
    plan = plan_tool("算一下 6*7", ToolsConfig(), REGISTRY, is_admin=False)
    context = await _run(plan, tool_turn=False)  # e.g. a QUOTE turn
    assert context.results == () and context.trace is None


async def test_refused_tool_never_runs_and_the_model_is_told_why() -> None:
    plan = plan_tool("算一下 6*7", ToolsConfig(allowed=("dice",)), REGISTRY, is_admin=False)
    context = await _run(plan)
    assert [r.content for r in context.results] == [NOT_PERMITTED_RESULT]  # nothing computed
    assert context.rules == (NOT_PERMITTED_RULE.format(label=plan.label),)
    assert context.trace is not None and context.trace["permitted"] is False


async def test_permitted_tool_result_and_rule_reach_the_prompt() -> None:
    plan = plan_tool("算一下 6*7", ToolsConfig(), REGISTRY, is_admin=False)
    context = await _run(plan)
    assert len(context.results) == 1 and "42" in context.results[0].content
    assert context.rules == (TOOL_RESULT_RULE,)
    assert context.trace is not None and context.trace["ok"] is True


async def test_failed_tool_is_reported_as_a_failure_not_a_result() -> None:
    plan = plan_tool("今天谁最活跃", ToolsConfig(), REGISTRY, is_admin=True)
    context = await _run(plan)  # no activity reader: the tool cannot answer
    assert context.rules == (TOOL_FAILED_RULE,)
    assert context.trace is not None and context.trace["ok"] is False


@pytest.mark.parametrize(
    ("role", "admins", "permitted"),
    [
        ("member", set(), False),
        ("admin", set(), True),
        ("owner", set(), True),
        ("member", {3}, True),
    ],
)
def test_turn_plan_counts_roles_and_configured_admins(
    role: str, admins: set[int], permitted: bool
) -> None:
    turn = TurnInput(
        bot_id=1,
        group_id=2,
        user_id=3,
        message_id=4,
        time=0.0,
        text="牛牛 今天谁最活跃",
        sender=Sender(user_id=3, role=role),
    )
    config = ToolsConfig(admin_only=("activity",))
    plan = plan_turn_tool(turn, config, REGISTRY, ALIASES, admins=admins)
    assert plan.call is not None and plan.call.name == "activity"
    assert plan.permitted is permitted
