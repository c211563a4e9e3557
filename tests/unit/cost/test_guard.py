"""CostGuard over a real MemoryStateStore: budgets first, then the member's bucket."""

from __future__ import annotations

import logging
import random
from dataclasses import replace

import pytest

from pallas.config import GroupConfig
from pallas.core.clock import FakeClock
from pallas.core.db.repositories.usage import UsageTotals
from pallas.core.state import MemoryStateStore
from pallas.core.turn import Sender, TurnInput
from pallas.features.cost.counters import UsageCounters
from pallas.features.cost.guard import CostGuard
from pallas.features.cost.ladder import Limits
from pallas.routing.config import AmbientConfig, CooldownConfig, RoutingConfig
from pallas.routing.evaluate import RouteResult
from pallas.routing.router import Router
from pallas.routing.triggers import TriggerKind
from tests.unit.routing.helpers import ALIASES, ALICE, BOB, BOT, GROUP, T0, turn

QUIET = RoutingConfig(
    ambient=AmbientConfig(enabled=False), cooldown=CooldownConfig(chat_cooldown_s=0)
)
DAY = 86_400.0
NO_CAP = Limits()


def group_config(**cost: object) -> GroupConfig:
    return GroupConfig.model_validate({"cost": cost})


class Harness:
    def __init__(self, ledger: object | None = None, cap: Limits = NO_CAP) -> None:
        self.clock = FakeClock(T0)
        self.store = MemoryStateStore(self.clock)
        self.engine = Router(self.store)
        self.counters = UsageCounters(self.store, ledger)  # type: ignore[arg-type]
        self.guard = CostGuard(
            self.counters, deployment=cap, superusers=frozenset({99}), rng=random.Random(1)
        )
        self.next_id = 0

    async def route(self, user: int = ALICE, *, at: bool = True, **kw: object) -> RouteResult:
        self.next_id += 1
        t = turn("在吗", user=user, at_bot=at, message_id=self.next_id, time=self.clock.now())
        if kw:
            t = replace(t, **kw)  # type: ignore[arg-type]
        result = await self.engine.route(
            t, QUIET, aliases=ALIASES, now=self.clock.now(), rng=random.Random(3)
        )
        await self.engine.finish_turn(BOT, GROUP, user)
        return result

    async def check(self, config: GroupConfig, **kw: object):
        route = await self.route(**kw)
        assert route.calls_llm
        return await self.guard.check(route.turn, route, config, self.clock.now())


async def test_member_over_the_limit_gets_one_phrase_then_silence() -> None:
    h = Harness()
    config = group_config(member={"burst": 2, "turns": 6, "window_s": 600})
    verdicts = []
    for _ in range(6):
        verdicts.append(await h.check(config))
        h.clock.advance(2)
    assert [v.action for v in verdicts] == ["proceed", "proceed", "phrase", "drop", "drop", "drop"]
    assert "歇会儿" in (verdicts[2].phrase or "")
    assert verdicts[3].reason == "member_rate_limited"
    count, members = await h.counters.limited_today(h.clock.now(), GROUP)
    assert (count, members) == (4, [ALICE])
    # another member of the same group is not affected
    assert (await h.check(config, user=BOB)).action == "proceed"


async def test_the_limit_follows_the_user_into_another_group_and_their_private_chat() -> None:
    """One bucket per QQ user: a member who used it up in one group is not fresh elsewhere."""
    h = Harness()
    config = group_config(member={"burst": 2, "turns": 6, "window_s": 600})
    assert [(await h.check(config)).action for _ in range(2)] == ["proceed", "proceed"]
    elsewhere = await h.check(config, group_id=GROUP + 1)
    assert (elsewhere.action, elsewhere.reason) == ("phrase", "member_rate_limited:notified")
    route = await h.route()
    dm = replace(route, turn=replace(route.turn, group_id=0))
    verdict = await h.guard.check(dm.turn, dm, config, h.clock.now())
    assert (verdict.action, verdict.reason) == ("drop", "member_rate_limited")
    # another user's first DM is untouched
    other = replace(route, turn=replace(route.turn, group_id=0, user_id=BOB))
    assert (await h.guard.check(other.turn, other, config, h.clock.now())).action == "proceed"


@pytest.mark.parametrize(
    "speaker",
    [
        {"user": 99},  # superuser
        {"user": 7, "sender": Sender(user_id=7, role="admin")},  # group admin
        {"user": 55},  # listed in the group's `admins`
    ],
    ids=["superuser", "group-admin", "config-admin"],
)
async def test_admins_are_exempt_when_configured(speaker: dict) -> None:
    h = Harness()
    config = GroupConfig.model_validate({"admins": [55], "cost": {"member": {"burst": 1}}})
    for _ in range(5):
        assert (await h.check(config, **speaker)).proceeds
    strict = GroupConfig.model_validate(
        {"admins": [55], "cost": {"member": {"burst": 1, "exempt_admins": False}}}
    )
    h.clock.advance(3600)
    results = [(await h.check(strict, **speaker)).action for _ in range(2)]
    assert results == ["proceed", "phrase"]


async def test_unaddressed_turn_over_the_limit_is_dropped_and_keeps_the_phrase() -> None:
    h = Harness()
    config = group_config(member={"burst": 1})
    assert (await h.check(config)).proceeds
    route = await h.route()
    follow = replace(
        route, trigger=replace(route.trigger, kind=TriggerKind.FOLLOW_UP, addressed=False)
    )
    quiet = await h.guard.check(follow.turn, follow, config, h.clock.now())
    assert quiet.action == "drop" and quiet.phrase is None
    loud = await h.check(config)
    assert loud.action == "phrase"  # the window's one phrase is still there for an @


async def test_group_budget_reached_phrases_every_at_until_the_next_china_day() -> None:
    h = Harness()
    config = group_config(budget={"chat_calls": 2, "step_pct": 0})
    for _ in range(2):
        verdict = await h.check(config)
        assert verdict.proceeds
        await h.guard.record(
            verdict_turn(), h.clock.now(), images=False, tokens=100,
            reservation=verdict.reservation,
        )  # fmt: skip
    refused = [await h.check(config) for _ in range(3)]
    assert [v.action for v in refused] == ["phrase"] * 3
    assert all(v.reason == "group_budget:phrase" and v.phrase for v in refused)
    # the budget refusals took no member token: the member is not rate limited tomorrow
    h.clock.advance(DAY)
    assert (await h.check(config)).proceeds


def verdict_turn() -> TurnInput:
    return turn("x", at_bot=True)


async def test_two_accounts_in_a_group_spend_its_one_budget() -> None:
    """A second QQ account of the deployment in the same group: the group's daily budget is
    the group's, so the second account's calls count against the first's."""
    h = Harness()
    config = group_config(budget={"chat_calls": 2, "step_pct": 0})
    for account in (BOT, BOT + 1):
        verdict = await h.check(config)
        assert verdict.proceeds
        await h.guard.record(
            replace(verdict_turn(), bot_id=account), h.clock.now(), images=False, tokens=100,
            reservation=verdict.reservation,
        )  # fmt: skip
    other_account = replace(verdict_turn(), bot_id=BOT + 1)
    route = await h.route()
    refused = await h.guard.check(other_account, route, config, h.clock.now())
    assert refused.action == "phrase" and refused.reason == "group_budget:phrase"


async def test_vision_calls_count_separately() -> None:
    h = Harness()
    config = group_config(budget={"vision_calls": 1})
    await h.guard.record(verdict_turn(), h.clock.now(), images=True, tokens=10)
    verdict = await h.check(config)
    assert verdict.proceeds and verdict.text_only
    assert verdict.reason == "vision_budget:text_only"


async def test_deployment_cap_trips_once_with_an_error_line_and_a_notice(
    caplog: pytest.LogCaptureFixture,
) -> None:
    h = Harness(cap=Limits(calls=1))
    config = group_config(budget={"step_pct": 0})
    await h.guard.record(verdict_turn(), h.clock.now(), images=False, tokens=0)
    with caplog.at_level(logging.WARNING, logger="pallas.cost"):
        first = await h.check(config)
        second = await h.check(config)
    assert first.reason == second.reason == "deployment_budget:phrase"
    assert first.notice and "部署上限" in first.notice and second.notice is None
    trips = [r for r in caplog.records if "deployment-wide daily cap" in r.message]
    assert len(trips) == 1 and trips[0].levelno == logging.ERROR
    assert len(await h.counters.notices(h.clock.now())) == 1


async def test_warning_is_logged_once_a_day(caplog: pytest.LogCaptureFixture) -> None:
    h = Harness()
    config = group_config(budget={"chat_calls": 10})
    for _ in range(8):
        await h.guard.record(verdict_turn(), h.clock.now(), images=False, tokens=0)
    with caplog.at_level(logging.WARNING, logger="pallas.cost"):
        for _ in range(2):
            verdict = await h.check(config)
            assert verdict.proceeds and verdict.reason == "budget_warning"
    assert sum("daily budget" in r.message for r in caplog.records) == 1


async def test_shortening_cuts_the_turns_context_windows() -> None:
    h = Harness()
    config = group_config(
        budget={"chat_calls": 10, "ladder": ["shorten_context"], "shorten_factor": 0.5}
    )
    for _ in range(10):
        await h.guard.record(verdict_turn(), h.clock.now(), images=False, tokens=0)
    route = await h.route()
    verdict = await h.guard.check(route.turn, route, config, h.clock.now())
    assert verdict.proceeds and verdict.shorten_factor == 0.5
    shaped_route, shaped = verdict.shape(route, config)
    assert shaped.context.timeline_width == config.context.timeline_width // 2
    assert shaped.context.session_user_window == config.context.session_user_window // 2
    assert shaped_route.trigger.timeline_width == route.trigger.timeline_width // 2
    assert config.context.timeline_width == 8  # the group's own config is untouched


class FakeLedger:
    def __init__(self, calls: int, tokens: int) -> None:
        self.calls, self.tokens, self.queries = calls, tokens, 0

    async def totals(self, **_: object) -> UsageTotals:
        self.queries += 1
        return UsageTotals(calls=self.calls, prompt_tokens=self.tokens)


async def test_counters_are_seeded_from_the_ledger_once_a_day() -> None:
    ledger = FakeLedger(calls=2, tokens=50)
    h = Harness(ledger)
    config = group_config(budget={"chat_calls": 2, "step_pct": 0})
    assert (await h.check(config)).action == "phrase"  # a restart does not reset the day
    await h.check(config)
    assert ledger.queries == 2  # group + deployment, once each
    usage = await h.counters.today(h.clock.now(), GROUP)
    assert (usage.chat.calls, usage.chat.tokens) == (2, 50)
