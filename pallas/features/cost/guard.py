"""CostGuard: the reply path's brake, checked after routing and before the LLM call.

Order: today's budgets first (`ladder.plan_budget`, counters from the StateStore), then the
member's limit (`rate_limit.decide_member_turn`: a flood token, or one of today's conversation
turns, taken only when the turn will call the LLM). `record` marks the member answered, which
is what lets their next paced line count as conversation. The verdict is frozen and carries a
named `reason`; the caller (the turn's cost exit, `pallas/turn/parts/cost_exit.py`) sends the
one local phrase, writes the route-log record, frees the turn.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol, Self, TypeVar

from pallas.context.config import ContextConfig
from pallas.core import state_keys
from pallas.core.clock import local_day
from pallas.core.state import StateStore, StateUnavailableError
from pallas.core.turn import TurnInput
from pallas.features.cost.config import BudgetConfig, CostConfig, MemberLimitConfig
from pallas.features.cost.counters import Reservation, UsageCounters
from pallas.features.cost.ladder import BudgetPlan, Limits, plan_budget
from pallas.features.cost.rate_limit import (
    CEILING,
    BucketState,
    MemberDecision,
    decide_member_turn,
    state_ttl,
)
from pallas.routing.evaluate import RouteResult

log = logging.getLogger("pallas.cost")

Verdict = Literal["proceed", "phrase", "drop"]


class CostCheckView(Protocol):
    """What the guard reads of a group's config (`GroupConfig` is one)."""

    @property
    def cost(self) -> CostConfig: ...

    @property
    def admins(self) -> Sequence[int]: ...  # exempt from the member limit like group admins


class ShapeableConfig(Protocol):
    """A group config whose context the ladder can shorten (`GroupConfig` is one)."""

    @property
    def context(self) -> ContextConfig: ...

    def model_copy(
        self, *, update: Mapping[str, Any] | None = None, deep: bool = False
    ) -> Self: ...


C = TypeVar("C", bound=ShapeableConfig)
BUCKET_ATTEMPTS = 8  # reads of a member's bucket when other turns keep writing it first
_NO_BUDGET = BudgetConfig(chat_calls=0, chat_tokens=0, vision_calls=0, vision_tokens=0)


@dataclass(frozen=True, slots=True)
class CostVerdict:
    action: Verdict
    reason: str
    phrase: str | None = None
    budget: BudgetPlan | None = None
    member: MemberDecision | None = None
    shorten_factor: float = 1.0  # < 1: the turn's context windows are cut to this share
    model: str | None = None  # the cheaper model for this turn
    text_only: bool = False
    notice: str | None = None  # the deployment cap tripped on this turn: tell the superusers
    reservation: Reservation | None = None  # the reply call counted ahead (proceed only)

    @property
    def proceeds(self) -> bool:
        return self.action == "proceed"

    @property
    def noteworthy(self) -> bool:
        """Worth a route-log record: a refusal or a degradation (not a mere warning)."""
        return not self.proceeds or self.reason not in ("budget_ok", "budget_warning")

    def to_log_dict(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "reason": self.reason,
            "phrase": self.phrase,
            "budget": None if self.budget is None else self.budget.to_log_dict(),
            "member": None if self.member is None else self.member.to_log_dict(),
            "model": self.model,
            "shorten_factor": self.shorten_factor,
        }

    def shape(self, route: RouteResult, config: C) -> tuple[RouteResult, C]:
        """The turn's route and config with the ladder's context shortening applied."""
        if self.shorten_factor >= 1.0:
            return route, config
        f = self.shorten_factor
        full = config.context
        context = full.model_copy(
            update={
                "timeline_width": _cut(full.timeline_width, f),
                "timeline_ambient_width": _cut(full.timeline_ambient_width, f),
                "session_user_window": max(1, _cut(full.session_user_window, f)),
                "session_group_window": _cut(full.session_group_window, f),
                "char_budget": max(500, _cut(full.char_budget, f)),
            }
        )
        trigger = replace(route.trigger, timeline_width=_cut(route.trigger.timeline_width, f))
        return replace(route, trigger=trigger), config.model_copy(update={"context": context})


PROCEED = CostVerdict("proceed", "budget_ok")


def _cut(value: int, factor: float) -> int:
    return int(value * factor)


@dataclass
class CostGuard:
    counters: UsageCounters
    deployment: Limits = field(default_factory=Limits)
    cheap_model: str | None = None  # PALLAS_CHEAP_MODEL when it differs from the chat model
    superusers: frozenset[int] = frozenset()
    rng: random.Random = field(default_factory=random.Random)
    # the cheap model as in force now (a model saved in the console's 模型 page counts at
    # once); when given, it is read on every check instead of `cheap_model`
    cheap_model_of: Callable[[], str | None] | None = None

    @property
    def state(self) -> StateStore:
        return self.counters.state

    async def check(
        self, turn: TurnInput, route: RouteResult, config: CostCheckView, now: float
    ) -> CostVerdict:
        """The turn's verdict. One that proceeds holds a reserved call (`verdict.reservation`),
        settled by `record` after the model call or given back by `release`."""
        cost: CostConfig = config.cost
        budget_cfg = cost.budget if cost.enabled else _NO_BUDGET
        reservation, usage = await self.counters.reserve(now, turn.group_id)
        plan = plan_budget(
            usage,
            budget_cfg,
            deployment=self.deployment,
            addressed=route.trigger.addressed,
            ambient=route.trigger.is_ambient,
            cheap_model=self.cheap_model_of() if self.cheap_model_of else self.cheap_model,
        )
        if plan.action != "proceed":
            await self.counters.release(reservation)
        notice = await self._announce(turn, plan, now)
        if plan.action == "phrase":
            said = self.rng.choice(budget_cfg.phrases)
            return CostVerdict("phrase", plan.reason, said, budget=plan, notice=notice)
        if plan.action == "drop":
            return CostVerdict("drop", plan.reason, budget=plan, notice=notice)
        member = await self._member(turn, route, config, now)
        if not member.allowed:
            await self.counters.release(reservation)
            phrase = self.rng.choice(_phrases(cost, member)) if member.notify else None
            await self.counters.note_limited(now, turn.group_id, turn.user_id)
            action: Literal["phrase", "drop"] = "phrase" if phrase else "drop"
            return CostVerdict(action, member.reason, phrase, plan, member, notice=notice)
        return CostVerdict(
            "proceed",
            plan.reason,
            budget=plan,
            member=member,
            shorten_factor=budget_cfg.shorten_factor if plan.shorten else 1.0,
            model=plan.cheap_model,
            text_only=plan.text_only,
            notice=notice,
            reservation=reservation,
        )

    async def release(self, verdict: CostVerdict) -> None:
        """The turn ended: a reserved call it did not make is given back."""
        await self.counters.release(verdict.reservation)

    async def record(
        self,
        turn: TurnInput,
        now: float,
        *,
        images: bool,
        tokens: int,
        member: MemberLimitConfig | None = None,
        reservation: Reservation | None = None,
    ) -> None:
        """Count one reply LLM call into today's counters (the turn's first call settles the
        `reservation` its verdict holds). With the group's `member` limit, the member's
        bucket also notes the answer (their next paced line is conversation)."""
        kind: Literal["chat", "vision"] = "vision" if images else "chat"
        await self.counters.record(now, turn.group_id, kind, tokens, reservation)
        if member is None or not member.enabled:
            return
        key = state_keys.cost_member(turn.user_id)
        for _ in range(BUCKET_ATTEMPTS):  # the bucket as it is now, whoever wrote it last
            raw = await self.state.get(key)
            state = BucketState.from_json(raw)
            if state is None or await self._write_bucket(
                key, raw, state.answered(now).to_json(), member
            ):
                return

    async def _member(
        self, turn: TurnInput, route: RouteResult, config: CostCheckView, now: float
    ) -> MemberDecision:
        """The member's turn against their bucket. The bucket is read, decided on and written
        back only if no other turn (this process or another) wrote it meanwhile; otherwise
        read and decided again, so two lines at once cannot both take the last token."""
        limits = config.cost.member
        if not config.cost.enabled:
            return decide_member_turn(None, now, limits.model_copy(update={"enabled": False}))
        key = state_keys.cost_member(turn.user_id)
        talked = state_keys.cost_conversation(local_day(now), turn.user_id)
        for _ in range(BUCKET_ATTEMPTS):
            raw = await self.state.get(key)
            decision = await self._decide_member(turn, route, config, now, raw, talked)
            if decision.state is None or await self._write_bucket(
                key, raw, decision.state.to_json(), limits
            ):
                break
        else:
            log.warning(
                "cost guard: user %s's bucket kept changing; last decision kept", turn.user_id
            )
            if decision.state is not None:
                await self.state.set(key, decision.state.to_json(), ttl=state_ttl(limits))
        if decision.counts_conversation:
            await self.state.incr(talked, 1, ttl=state_keys.COST_DAY_TTL_S)
        return decision

    async def _decide_member(
        self,
        turn: TurnInput,
        route: RouteResult,
        config: CostCheckView,
        now: float,
        raw: Any,
        talked: str,
    ) -> MemberDecision:
        state = BucketState.from_json(raw)
        decision = decide_member_turn(
            state,
            now,
            config.cost.member,
            exempt=self._exempt(turn, config),
            text=turn.text,
            conversation_today=int(await self.state.get(talked) or 0),
        )
        if decision.notify and not route.trigger.addressed:
            # a non-addressed turn is dropped quietly and keeps the window's one phrase
            old = state.notified_at if state is not None else None
            kept = replace(decision.state, notified_at=old) if decision.state else None
            quiet = decision.reason.removesuffix(":notified")
            decision = replace(decision, notify=False, reason=quiet, state=kept)
        return decision

    async def _write_bucket(
        self, key: str, expected: Any, value: dict[str, Any], limits: MemberLimitConfig
    ) -> bool:
        """Write the bucket unless it changed since `expected` was read (True: written, or
        the store is unreachable and the turn goes on as if it were)."""
        try:
            return await self.state.compare_and_set(key, expected, value, ttl=state_ttl(limits))
        except StateUnavailableError:
            return True

    def _exempt(self, turn: TurnInput, config: CostCheckView) -> bool:
        if not config.cost.member.exempt_admins:
            return False
        uid = turn.user_id
        return uid in self.superusers or uid in config.admins or turn.speaker.is_admin

    async def _announce(self, turn: TurnInput, plan: BudgetPlan, now: float) -> str | None:
        """Warn once a day at `warn_pct`; the deployment cap's trip is an error + notice
        (returned the one time it trips, for the superusers)."""
        scope, notice = state_keys.cost_scope(turn.group_id), None
        for what in plan.warnings:
            key = state_keys.cost_warning(None if what == "deployment" else scope, what)
            if await self.counters.once_today(now, key):
                log.warning(
                    "cost guard: group %s at %.0f %% of %s daily budget",
                    turn.group_id,
                    plan.percent[what],
                    what,
                )
        if plan.percent.get("deployment", 0.0) >= 100.0 and await self.counters.once_today(
            now, state_keys.cost_trip("deployment")
        ):
            text = (
                f"全部群今日回复总量已达部署上限（{plan.percent['deployment']:.0f}%），"
                "已按降级顺序减少回复"
            )
            log.error(
                "cost guard: deployment-wide daily cap reached (%.0f %%): replies degrade "
                "(%s) for the rest of the China day",
                plan.percent["deployment"],
                "+".join(plan.steps),
            )
            await self.counters.add_notice(now, text)
            notice = text
        if plan.percent.get("group:chat", 0.0) >= 100.0 and await self.counters.once_today(
            now, state_keys.cost_trip(scope)
        ):
            log.warning(
                "cost guard: group %s reached its daily chat budget: replies degrade (%s)",
                turn.group_id,
                "+".join(plan.steps),
            )
        return notice


def _phrases(cost: CostConfig, member: MemberDecision) -> list[str]:
    """The daily conversation ceiling says "tomorrow"; a flood says "slow down"."""
    return cost.member.ceiling_phrases if member.reason.startswith(CEILING) else cost.member.phrases
