"""Daily reply budgets and the degradation ladder: pure decisions over today's usage.

`plan_budget` takes today's usage of the group (chat and vision replies) and of the whole
deployment, the turn's trigger facts and the config, and says what this turn may do:

- below 100 % of every budget: proceed (at `warn_pct` a warning is attached, logged once);
- at 100 % of the chat budget (group) or of the deployment cap, the ladder's steps switch on
  one after another, each `step_pct` further above the budget, and stay on for the day:
  `drop_ambient` (ambient turns are dropped), `shorten_context` (smaller timeline and session
  windows), `cheap_model` (only @ / reply-to-bot turns are answered, with the cheap model if
  one is configured), `phrase` (an @ gets one local phrase, nothing calls the LLM). `phrase`
  always ends the ladder (appended when a config leaves it out);
- at 100 % of the vision budget, the reply goes text-only (no images attached).

Never an error text: the only things a group sees are a normal answer or a local phrase.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal

from pallas.features.cost.config import BudgetConfig

Action = Literal["proceed", "phrase", "drop"]


@dataclass(frozen=True, slots=True)
class Usage:
    calls: int = 0
    tokens: int = 0


@dataclass(frozen=True, slots=True)
class Limits:
    calls: int = 0  # 0 = no limit
    tokens: int = 0


@dataclass(frozen=True, slots=True)
class TodayUsage:
    """What `plan_budget` reads: today's counters (cheap, from the StateStore)."""

    chat: Usage = Usage()
    vision: Usage = Usage()
    deployment: Usage = Usage()  # all groups, chat + vision replies


@dataclass(frozen=True, slots=True)
class BudgetPlan:
    action: Action
    reason: str
    steps: tuple[str, ...] = ()  # active ladder steps
    scope: str = ""  # group | deployment: whose budget drives the ladder
    shorten: bool = False
    cheap_model: str | None = None
    text_only: bool = False  # vision budget exhausted
    warnings: tuple[str, ...] = ()  # "group:chat" / "group:vision" / "deployment" at warn_pct
    percent: dict[str, float] = field(default_factory=dict)

    @property
    def degraded(self) -> bool:
        return bool(self.steps) or self.text_only

    def to_log_dict(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "reason": self.reason,
            "steps": list(self.steps),
            "shorten": self.shorten,
            "cheap_model": self.cheap_model,
            "text_only": self.text_only,
            "percent": {k: round(v, 1) for k, v in self.percent.items()},
        }


def percent_used(usage: Usage, limits: Limits) -> float:
    """The larger of calls and tokens against their limits, in % (0 when unlimited)."""
    shares = [
        100.0 * used / limit
        for used, limit in ((usage.calls, limits.calls), (usage.tokens, limits.tokens))
        if limit > 0
    ]
    return max(shares, default=0.0)


def ladder_of(config: BudgetConfig) -> tuple[str, ...]:
    steps = tuple(dict.fromkeys(config.ladder))
    return steps if "phrase" in steps else (*steps, "phrase")


def active_steps(percent: float, config: BudgetConfig) -> tuple[str, ...]:
    """The ladder steps switched on at `percent` of the budget."""
    if percent < 100.0:
        return ()
    ladder = ladder_of(config)
    reached = [s for i, s in enumerate(ladder) if percent >= 100.0 + i * config.step_pct]
    # "phrase" ends the ladder: everything before it is implied
    return ladder if "phrase" in reached else tuple(reached)


def plan_budget(
    usage: TodayUsage,
    config: BudgetConfig,
    *,
    deployment: Limits,
    addressed: bool,
    ambient: bool,
    cheap_model: str | None = None,
) -> BudgetPlan:
    """What a turn that passed routing may do under today's budgets."""
    percent = {
        "group:chat": percent_used(usage.chat, Limits(config.chat_calls, config.chat_tokens)),
        "group:vision": percent_used(
            usage.vision, Limits(config.vision_calls, config.vision_tokens)
        ),
        "deployment": percent_used(usage.deployment, deployment),
    }
    warnings = tuple(k for k, v in percent.items() if config.warn_pct <= v)
    scope = "deployment" if percent["deployment"] > percent["group:chat"] else "group"
    steps = active_steps(max(percent["deployment"], percent["group:chat"]), config)
    text_only = percent["group:vision"] >= 100.0
    base = BudgetPlan(
        "proceed",
        "budget_ok",
        steps=steps,
        scope=scope if steps else "",
        shorten="shorten_context" in steps,
        text_only=text_only,
        warnings=warnings,
        percent=percent,
    )
    return _apply_ladder(base, addressed=addressed, ambient=ambient, cheap_model=cheap_model)


def _apply_ladder(
    plan: BudgetPlan, *, addressed: bool, ambient: bool, cheap_model: str | None
) -> BudgetPlan:
    steps, prefix = plan.steps, f"{plan.scope}_budget"
    if "phrase" in steps:
        if addressed:
            return _with(plan, "phrase", f"{prefix}:phrase")
        return _with(plan, "drop", f"{prefix}:addressed_only")
    if "cheap_model" in steps:
        if not addressed:
            return _with(plan, "drop", f"{prefix}:addressed_only")
        return _with(plan, "proceed", f"{prefix}:{'+'.join(steps)}", cheap_model=cheap_model)
    if "drop_ambient" in steps and ambient:
        return _with(plan, "drop", f"{prefix}:drop_ambient")
    if steps:
        return _with(plan, "proceed", f"{prefix}:{'+'.join(steps)}")
    if plan.text_only:
        return _with(plan, "proceed", "vision_budget:text_only")
    if plan.warnings:
        return _with(plan, "proceed", "budget_warning")
    return plan


def _with(plan: BudgetPlan, action: Action, reason: str, **extra: Any) -> BudgetPlan:
    return replace(plan, action=action, reason=reason, **extra)
