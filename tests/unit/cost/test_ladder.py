"""Daily budgets and the degradation ladder (pure)."""

from __future__ import annotations

import pytest

from pallas.features.cost.config import BudgetConfig
from pallas.features.cost.ladder import (
    Limits,
    TodayUsage,
    Usage,
    active_steps,
    percent_used,
    plan_budget,
)

BUDGET = BudgetConfig(chat_calls=100, chat_tokens=0, vision_calls=10, vision_tokens=0)
NO_CAP = Limits()


def plan(
    chat: int = 0,
    *,
    vision: int = 0,
    deployment: int = 0,
    cap: Limits = NO_CAP,
    addressed: bool = True,
    ambient: bool = False,
    config: BudgetConfig = BUDGET,
    cheap: str | None = "cheap-model",
):
    usage = TodayUsage(Usage(chat), Usage(vision), Usage(deployment))
    return plan_budget(
        usage, config, deployment=cap, addressed=addressed, ambient=ambient, cheap_model=cheap
    )


@pytest.mark.parametrize(
    ("used", "limits", "percent"),
    [
        (Usage(50, 10), Limits(100, 0), 50.0),
        (Usage(50, 900), Limits(100, 1000), 90.0),  # the larger share counts
        (Usage(500, 500), Limits(0, 0), 0.0),  # unlimited
    ],
)
def test_percent_used(used: Usage, limits: Limits, percent: float) -> None:
    assert percent_used(used, limits) == percent


@pytest.mark.parametrize(
    ("percent", "steps"),
    [
        (99.9, ()),
        (100, ("drop_ambient",)),
        (110, ("drop_ambient", "shorten_context")),
        (125, ("drop_ambient", "shorten_context", "cheap_model")),
        (130, ("drop_ambient", "shorten_context", "cheap_model", "phrase")),
        (500, ("drop_ambient", "shorten_context", "cheap_model", "phrase")),
    ],
)
def test_steps_switch_on_one_after_another(percent: float, steps: tuple[str, ...]) -> None:
    assert active_steps(percent, BUDGET) == steps


def test_step_pct_zero_switches_everything_on_at_100() -> None:
    config = BUDGET.model_copy(update={"step_pct": 0.0})
    assert active_steps(100, config)[-1] == "phrase"


def test_phrase_always_ends_a_configured_ladder() -> None:
    config = BUDGET.model_copy(update={"ladder": ["shorten_context"]})
    assert active_steps(100, config) == ("shorten_context",)
    assert active_steps(110, config) == ("shorten_context", "phrase")


# (chat calls used, addressed, ambient) → (action, reason, shorten, cheap model)
LADDER_TABLE = [
    (50, True, False, "proceed", "budget_ok", False, None),
    (85, True, False, "proceed", "budget_warning", False, None),
    (100, False, True, "drop", "group_budget:drop_ambient", False, None),
    (100, True, False, "proceed", "group_budget:drop_ambient", False, None),
    (110, False, False, "proceed", "group_budget:drop_ambient+shorten_context", True, None),
    (120, False, False, "drop", "group_budget:addressed_only", True, None),
    (
        120,
        True,
        False,
        "proceed",
        "group_budget:drop_ambient+shorten_context+cheap_model",
        True,
        "cheap-model",
    ),
    (130, True, False, "phrase", "group_budget:phrase", True, None),
    (130, False, False, "drop", "group_budget:addressed_only", True, None),
]


@pytest.mark.parametrize(
    ("chat", "addressed", "ambient", "action", "reason", "shorten", "cheap"), LADDER_TABLE
)
def test_ladder(
    chat: int,
    addressed: bool,
    ambient: bool,
    action: str,
    reason: str,
    shorten: bool,
    cheap: str | None,
) -> None:
    result = plan(chat, addressed=addressed, ambient=ambient)
    assert (result.action, result.reason, result.shorten, result.cheap_model) == (
        action,
        reason,
        shorten,
        cheap,
    )


def test_cheap_step_without_a_cheap_model_keeps_the_chat_model() -> None:
    result = plan(120, cheap=None)
    assert result.action == "proceed" and result.cheap_model is None


def test_warnings_name_each_budget_at_warn_pct() -> None:
    result = plan(80, vision=9, deployment=850, cap=Limits(1000, 0))
    assert set(result.warnings) == {"group:chat", "group:vision", "deployment"}
    assert plan(79).warnings == ()


def test_vision_budget_makes_replies_text_only() -> None:
    result = plan(10, vision=10)
    assert result.action == "proceed" and result.text_only
    assert result.reason == "vision_budget:text_only"


def test_deployment_cap_drives_the_ladder_when_it_is_further_along() -> None:
    result = plan(10, deployment=1300, cap=Limits(1000, 0))
    assert result.action == "phrase" and result.reason == "deployment_budget:phrase"
    assert result.scope == "deployment"


def test_zero_budgets_mean_unlimited() -> None:
    config = BudgetConfig(chat_calls=0, chat_tokens=0, vision_calls=0, vision_tokens=0)
    assert plan(10**9, vision=10**9, config=config).action == "proceed"


def test_token_budget_counts_like_calls() -> None:
    config = BudgetConfig(chat_calls=0, chat_tokens=1000, step_pct=0.0)
    usage = TodayUsage(Usage(1, 1000))
    result = plan_budget(usage, config, deployment=NO_CAP, addressed=True, ambient=False)
    assert result.action == "phrase"
