"""Side-effect calls held for an admin: listed per group, decided once, gone after 10 minutes."""

from __future__ import annotations

import asyncio

from pallas.core.clock import FakeClock
from pallas.core.state import MemoryStateStore
from pallas.features.tools import PendingCalls


async def test_a_held_call_is_decided_once_in_its_own_group_and_expires() -> None:
    clock = FakeClock()
    pending = PendingCalls(MemoryStateStore(clock))
    held = await pending.hold(1, 10, server="mail", tool="send", args={"to": "x"}, user_id=7,
                              now=clock.now())  # fmt: skip
    other = await pending.hold(1, 10, server="mail", tool="send", args={}, user_id=8, now=0.0)
    assert [c.code for c in await pending.waiting(1, 10)] == [other.code, held.code]
    assert await pending.waiting(1, 11) == []
    assert await pending.decide(1, 11, held.code) is None  # another group's admin
    both = await asyncio.gather(pending.decide(1, 10, held.code), pending.decide(1, 10, held.code))
    assert [c.args if c else None for c in both].count({"to": "x"}) == 1  # runs once
    assert [c.code for c in await pending.waiting(1, 10)] == [other.code]
    clock.advance(601)
    assert await pending.waiting(1, 10) == [] and await pending.decide(1, 10, other.code) is None
