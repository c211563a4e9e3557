"""An addressed turn holds the event loop until its model request is out: no unaddressed
handler starts meanwhile; the hold ends when the turn releases it, at the end of the handling,
or after its cap — and an @ seen when its frame is read holds from that moment."""

from __future__ import annotations

import asyncio
from typing import Any

from pallas.onebot.lane_choice import LaneVerdict
from pallas.onebot.lanes import Lanes, PriorityHold, admitted


class ReadClaims:
    """What the edge does when a frame is read (`Edge.on_read`, reduced): an @ claims the loop
    at once; the handler gets its claim explicitly (the `Arrival`)."""

    def __init__(self, lanes: Lanes) -> None:
        self.lanes = lanes
        self.claims: dict[str, PriorityHold] = {}
        self.reads: list[str] = []

    def read(self, event: str) -> None:
        self.reads.append(event)
        if event.startswith("@"):
            self.claims[event] = self.lanes.hold()

    def admission(self, event: Any) -> tuple[LaneVerdict, PriorityHold | None]:
        return LaneVerdict(event.startswith("@"), "test"), self.claims.get(event)


async def turns(n: int = 5) -> None:
    for _ in range(n):  # loop turns, no time passes
        await asyncio.sleep(0)


async def test_unaddressed_handlers_wait_until_the_at_sends_its_model_request() -> None:
    lanes = Lanes(normal=4, priority=2)
    edge = ReadClaims(lanes)
    running: list[str] = []
    model_called = asyncio.Event()
    request_may_go = asyncio.Event()

    async def handle(event: str) -> None:
        running.append(event)
        if event.startswith("@"):
            await request_may_go.wait()  # the turn's local work
            edge.claims[event].release()  # the turn: its model request goes out
            model_called.set()
            await asyncio.sleep(10)  # the model answering: the hold is already released

    run = admitted(handle, lanes, edge.admission, hold=60.0)
    edge.read("@bot")
    at = asyncio.ensure_future(run("@bot"))
    await turns()
    assert lanes.holding
    burst = [asyncio.ensure_future(run(f"msg{i}")) for i in range(3)]
    await turns()
    assert running == ["@bot"], "nothing unaddressed starts while the @ prepares"
    request_may_go.set()
    await turns(10)
    assert model_called.is_set() and not lanes.holding
    assert running == ["@bot", "msg0", "msg1", "msg2"]
    await asyncio.gather(*burst)
    at.cancel()


async def test_the_hold_ends_with_the_handling_or_after_its_cap() -> None:
    lanes = Lanes(hold_max_s=0.05)
    edge = ReadClaims(lanes)
    gate = asyncio.Event()

    async def handle(event: str) -> None:
        if event == "@slow":
            await gate.wait()

    run = admitted(handle, lanes, edge.admission, hold=60.0)
    edge.read("@quick")
    await run("@quick")  # no model call (e.g. routed to silence)
    assert not lanes.holding
    edge.read("@slow")
    slow = asyncio.ensure_future(run("@slow"))
    await turns()
    assert lanes.holding
    await asyncio.sleep(0.1)
    assert not lanes.holding, "a turn that never reaches the model cannot hold the loop"
    gate.set()
    await slow
    assert not lanes.holding


async def test_an_at_claims_the_loop_when_its_frame_is_read() -> None:
    lanes = Lanes()
    edge = ReadClaims(lanes)
    edge.read("@bot")
    edge.read("hello")
    assert lanes.holding, "the receive loop yields after every frame from now on"
    seen: list[str] = []

    async def handle(event: str) -> None:
        seen.append(event)

    run = admitted(handle, lanes, edge.admission, hold=60.0)
    await run("@bot")
    assert not lanes.holding
    await run("hello")
    assert edge.reads == ["@bot", "hello"] and seen == ["@bot", "hello"]


async def test_background_work_after_holds_waits_for_every_addressed_turn() -> None:
    """A group preload's next load (`Lanes.after_holds`) waits while any @ prepares."""
    lanes = Lanes()
    done = asyncio.ensure_future(lanes.after_holds())
    await turns()
    assert done.done(), "no hold: one loop round only"
    first, second = lanes.hold(), lanes.hold()
    waiting = asyncio.ensure_future(lanes.after_holds())
    await turns()
    first.release()
    await turns()
    assert not waiting.done(), "one @ still prepares"
    second.release()
    await turns()
    assert waiting.done()
