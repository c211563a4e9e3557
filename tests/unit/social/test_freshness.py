"""Old messages after a reconnect or a backlog: recorded, not answered; one short reply per @."""

from __future__ import annotations

import pytest

from pallas.config import GroupConfig
from pallas.core.clock import FakeClock
from pallas.core.state import MemoryStateStore
from pallas.core.turn import TurnInput
from pallas.routing.freshness import FreshAction, FreshnessConfig, FreshnessGate, judge_freshness
from pallas.routing.router import Router

NOW = 1_800_000_000.0


@pytest.mark.parametrize(
    ("age", "addressed", "latest", "taken", "action", "reason"),
    [
        (1, False, True, False, FreshAction.ANSWER, "fresh"),
        (1, True, True, False, FreshAction.ANSWER, "fresh"),
        (119, True, False, True, FreshAction.ANSWER, "fresh"),  # not stale: nothing else counts
        (-30, False, True, False, FreshAction.ANSWER, "fresh"),  # peer clock ahead
        (121, False, True, False, FreshAction.SKIP, "stale_message"),
        (600, False, True, False, FreshAction.SKIP, "stale_message"),
        (300, True, False, False, FreshAction.SKIP, "stale_superseded"),
        (300, True, True, True, FreshAction.SKIP, "stale_already_answered"),
        (300, True, True, False, FreshAction.SHORT, "stale_short_reply"),
    ],
)
def test_verdict_by_age_and_address(
    age: float, addressed: bool, latest: bool, taken: bool, action: FreshAction, reason: str
) -> None:
    verdict = judge_freshness(
        event_time=NOW - age,
        now=NOW,
        max_age_s=120,
        addressed=addressed,
        is_latest_address=latest,
        short_reply_taken=taken,
    )
    assert (verdict.action, verdict.reason) == (action, reason)
    assert verdict.answers is (action is not FreshAction.SKIP)


def test_zero_max_age_answers_anything() -> None:
    verdict = judge_freshness(event_time=0, now=NOW, max_age_s=0, addressed=False)
    assert verdict.action is FreshAction.ANSWER


def _turn(message_id: int, age: float, *, user: int = 7, to_me: bool = True) -> TurnInput:
    return TurnInput(
        bot_id=1, group_id=2, user_id=user, message_id=message_id, time=NOW - age, text="在吗",
        to_me=to_me,
    )  # fmt: skip


async def _no_sleep(_: float) -> None:
    return None


async def test_backlog_of_ats_gets_one_short_reply_to_the_latest() -> None:
    store = MemoryStateStore(FakeClock(NOW))
    gate = FreshnessGate(store, Router(store), sleep=_no_sleep)
    config = FreshnessConfig()
    backlog = [_turn(11, 400), _turn(12, 300), _turn(13, 200)]
    for turn in backlog:  # the backlog arrives at once after a reconnect
        await gate.note(turn, config)
    verdicts = [await gate.check(t, config, now=NOW, addressed=True) for t in backlog]
    assert [v.reason for v in verdicts] == [
        "stale_superseded",
        "stale_superseded",
        "stale_short_reply",
    ]
    # the same message retried (cooldown) keeps its reply; a second look at it is not doubled
    again = await gate.check(backlog[-1], config, now=NOW, addressed=True)
    assert again.action is FreshAction.SHORT


async def test_one_short_reply_per_member_and_fresh_messages_untouched() -> None:
    store = MemoryStateStore(FakeClock(NOW))
    gate = FreshnessGate(store, Router(store), sleep=_no_sleep)
    config = FreshnessConfig()
    alice, bob = _turn(21, 300, user=7), _turn(22, 300, user=8)
    for turn in (alice, bob):
        await gate.note(turn, config)
    assert (await gate.check(alice, config, now=NOW, addressed=True)).action is FreshAction.SHORT
    assert (await gate.check(bob, config, now=NOW, addressed=True)).action is FreshAction.SHORT
    # a later stale @ of alice finds her one reply for this backlog already taken
    late = _turn(23, 250, user=7)
    await gate.note(late, config)
    assert (await gate.check(late, config, now=NOW, addressed=True)).reason == (
        "stale_already_answered"
    )
    fresh = _turn(24, 1, user=7)
    assert (await gate.check(fresh, config, now=NOW, addressed=True)).reason == "fresh"
    ambient = _turn(25, 500, user=9, to_me=False)
    assert (await gate.check(ambient, config, now=NOW, addressed=False)).reason == "stale_message"


async def test_skips_are_recorded_for_why() -> None:
    store = MemoryStateStore(FakeClock(NOW))
    routing = Router(store)
    gate = FreshnessGate(store, routing, sleep=_no_sleep)
    group = GroupConfig()
    old = _turn(31, 500, user=9, to_me=False)
    verdict = await gate.admit(old, group, NOW, addressed=False)
    assert verdict.reason == "stale_message"
    queued = _turn(32, 130, user=7)
    await gate.note(queued, group.freshness)
    await gate.note(_turn(33, 125, user=7), group.freshness)  # a later @ of the same member
    assert (await gate.admit(queued, group, NOW, True, stage="queue")).reason == "stale_superseded"
    records = await routing.recent_decisions(1, 2)
    assert [(r["stage"], r["reason"], r["outcome"]) for r in records] == [
        ("freshness", "stale_message", "skip"),
        ("queue", "stale_superseded", "skip"),
    ]
    assert (await gate.admit(_turn(34, 2), group, NOW, True)).answers  # fresh: nothing recorded
    assert len(await routing.recent_decisions(1, 2)) == 2


async def test_latest_at_is_chosen_by_event_time_not_arrival_order() -> None:
    """A backlog is handled concurrently: the newer @ may be noted before the older one."""
    store = MemoryStateStore(FakeClock(NOW))
    gate = FreshnessGate(store, Router(store), sleep=_no_sleep)
    config = FreshnessConfig()
    older, newer = _turn(41, 500, user=7), _turn(42, 400, user=7)
    for turn in (newer, older):  # arrival order reversed
        await gate.note(turn, config)
    assert (await gate.check(older, config, now=NOW, addressed=True)).reason == "stale_superseded"
    assert (await gate.check(newer, config, now=NOW, addressed=True)).action is FreshAction.SHORT
