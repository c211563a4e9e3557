"""While an @ prepares its model request, event frames wait before parsing — bounded per frame
and by a budget (a stream of @s slows recording, never stops it); API responses never wait; a
holder waiting for an API response (NoneBot's get_msg for a reply) does not pause reading; a
reply to someone holds nothing until it is known to quote the bot."""

from __future__ import annotations

import asyncio
import json

import pytest

from pallas.onebot.adapter import _is_event_frame
from pallas.onebot.lanes import Lanes
from pallas.onebot.read_pause import PauseBudget

EVENT = {"post_type": "message", "message_type": "group", "raw_message": 'say "echo" please'}
RESPONSE = {"status": "ok", "retcode": 0, "data": {"post_type": "message"}, "echo": "17"}


@pytest.mark.parametrize(
    ("frame", "is_event"),
    [
        (json.dumps(EVENT), True),  # the word echo in a member's text is escaped: \"echo\"
        (json.dumps(EVENT).encode(), True),
        (json.dumps(RESPONSE), False),  # get_msg's data may carry a post_type of its own
        (json.dumps(RESPONSE).encode(), False),
        (json.dumps({"post_type": "meta_event", "meta_event_type": "heartbeat"}), True),
    ],
)
def test_event_frames_and_api_responses_are_told_apart(frame: str | bytes, is_event: bool) -> None:
    assert _is_event_frame(frame) is is_event


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


# (seconds passed, seconds paused) per step → the allowance after each step
BUDGET_CASES = [
    ("a fresh budget allows one frame's wait", [], 0.25),
    ("a short pause leaves most of it", [(0.0, 0.1)], 0.25),
    ("the whole budget spent: read at once", [(0.0, 1.0)], 0.0),
    ("refills at half a second per second", [(0.0, 1.0), (0.2, 0.0)], 0.1),
    ("never above the per-frame cap", [(0.0, 1.0), (10.0, 0.0)], 0.25),
    ("paused all the time: budget drained", [(0.25, 0.25)] * 8, 0.0),
]


@pytest.mark.parametrize(
    ("name", "steps", "allowed"), BUDGET_CASES, ids=[c[0] for c in BUDGET_CASES]
)
def test_pause_budget(name: str, steps: list[tuple[float, float]], allowed: float) -> None:
    clock = Clock()
    budget = PauseBudget(share=0.5, cap_s=1.0, per_frame_s=0.25, clock=clock)
    for passed, paused in steps:
        clock.now += passed
        budget.allowance()
        budget.spend(paused)
    assert budget.allowance() == pytest.approx(allowed)


async def test_a_pending_hold_holds_nothing_until_engaged() -> None:
    lanes = Lanes(hold_max_s=60.0)
    hold = lanes.hold(engaged=False)  # a reply: does it quote the bot? get_msg will tell
    assert not lanes.holding and not lanes.reading_paused
    hold.engage()
    assert lanes.holding and lanes.reading_paused
    hold.release()
    hold.engage()  # too late: a released claim never holds again
    assert not lanes.holding and not lanes.reading_paused


async def test_a_holder_waiting_for_an_api_response_does_not_pause_reading() -> None:
    lanes = Lanes(hold_max_s=60.0)
    hold = lanes.hold()
    with hold.api_call():
        assert lanes.holding, "unaddressed handlers still wait"
        assert not lanes.reading_paused, "the response comes behind the frames on the socket"
    assert lanes.reading_paused
    with hold.api_call():
        hold.release()  # the cap ran out while waiting
    assert not lanes.holding and not lanes.reading_paused


async def test_reading_waits_for_the_hold_but_never_longer_than_the_budget() -> None:
    clock = Clock()
    lanes = Lanes(hold_max_s=60.0, pause_budget=PauseBudget(per_frame_s=0.05, clock=clock))
    hold = lanes.hold()
    waiting = asyncio.ensure_future(lanes.pause_reading())
    await asyncio.sleep(0)
    assert not waiting.done()
    hold.release()
    await asyncio.wait_for(waiting, 1.0)  # released: the frame goes on at once
    lanes.hold()  # never released (until its cap)
    await asyncio.wait_for(lanes.pause_reading(), 1.0)  # 0.05 s at most
    drained = Lanes(pause_budget=PauseBudget(cap_s=0.0, clock=clock))
    drained.hold()
    await asyncio.wait_for(drained.pause_reading(), 0.01)  # no budget left: no wait


@pytest.mark.parametrize(
    ("holders", "frame_waits", "at_waits"), [(0, False, False), (1, True, False), (2, True, True)]
)
async def test_an_at_waits_only_for_as_many_preparing_ats_as_may_run_at_once(
    holders: int, frame_waits: bool, at_waits: bool
) -> None:
    lanes = Lanes(hold_max_s=60.0, parallel_holds=2)
    for _ in range(holders):
        lanes.hold()
    assert lanes.paused_for(urgent=False) is frame_waits
    assert lanes.paused_for(urgent=True) is at_waits


async def test_a_waiting_at_is_read_as_soon_as_one_of_the_preparing_ats_is_out() -> None:
    lanes = Lanes(hold_max_s=60.0, parallel_holds=2)
    first, second = lanes.hold(), lanes.hold()
    at = asyncio.ensure_future(lanes.pause_reading(urgent=True))
    chatter = asyncio.ensure_future(lanes.pause_reading())
    await asyncio.sleep(0)
    assert not at.done() and not chatter.done()
    first.release()  # its model request is out
    await asyncio.wait_for(at, 1.0)
    await asyncio.sleep(0)
    assert not chatter.done(), "unaddressed frames still wait for the other @"
    second.release()
    await asyncio.wait_for(chatter, 1.0)
