"""The per-group commit hold: engaged just before a reply's final bubble, released after commit."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable

import pytest

from pallas.core.clock import FakeClock
from pallas.core.sending import SegmentDict, Target
from pallas.core.state import MemoryStateStore
from pallas.features.svars.pending import PendingCommits
from pallas.turn.parts.delivery import DeliveryPlan, DeliveryResult, deliver


async def no_sleep(_: float) -> None:
    return None


class RecordingSender:
    def __init__(self, pending: PendingCommits, fail_at: int | None = None) -> None:
        self.pending = pending
        self.fail_at = fail_at
        self.held_at_send: list[int] = []

    async def send(self, target: Target, segments: list[SegmentDict]) -> int | None:
        index = len(self.held_at_send)
        self.held_at_send.append(self.pending.pending(1, target.group_id))
        return None if index == self.fail_at else 100 + index


async def deliver_with(
    plan: DeliveryPlan, sender: RecordingSender, before_final: Callable[[], None]
) -> DeliveryResult:
    store = MemoryStateStore(FakeClock())
    return await deliver(
        plan, sender, store, rng=random.Random(1), sleep=no_sleep, before_final=before_final
    )


@pytest.mark.parametrize(
    ("bubbles", "sticker", "held"),
    [
        (("一",), None, [1]),
        (("一", "二", "三"), None, [0, 0, 1]),
        (("一", "二"), {"type": "image", "data": {"file": "x"}}, [0, 0, 1]),  # sticker is last
    ],
)
async def test_the_hold_is_engaged_only_for_the_final_message(
    bubbles: tuple[str, ...], sticker: SegmentDict | None, held: list[int]
) -> None:
    pending = PendingCommits()
    hold = pending.hold(1, 5)
    sender = RecordingSender(pending)
    plan = DeliveryPlan(bot_id=1, target=Target.group(5), bubbles=bubbles, sticker=sticker)
    result = await deliver_with(plan, sender, hold.engage)
    assert result.complete and sender.held_at_send == held
    hold.release()
    assert pending.pending(1, 5) == 0


async def test_a_failed_earlier_bubble_never_engages_the_hold() -> None:
    pending = PendingCommits()
    hold = pending.hold(1, 5)
    sender = RecordingSender(pending, fail_at=0)
    plan = DeliveryPlan(bot_id=1, target=Target.group(5), bubbles=("一", "二"))
    result = await deliver_with(plan, sender, hold.engage)
    assert not result.complete and pending.pending(1, 5) == 0
    await asyncio.wait_for(pending.settled(1, 5), 0.1)  # nothing to wait for


async def test_two_holds_in_a_group_release_readers_only_after_both() -> None:
    pending = PendingCommits()
    first, second = pending.hold(1, 5), pending.hold(1, 5)
    first.engage()
    second.engage()
    first.engage()  # engaging twice counts once
    reader = asyncio.create_task(pending.settled(1, 5))
    first.release()
    first.release()  # released twice counts once
    await asyncio.sleep(0)
    assert not reader.done() and pending.pending(1, 5) == 1
    second.release()
    await asyncio.wait_for(reader, 0.5)
    assert pending.pending(1, 5) == 0
    await asyncio.wait_for(pending.settled(1, 6), 0.1)  # other groups never wait
