"""An addressed turn holds the event loop until its model request is out: no unaddressed
handler starts meanwhile; the hold ends at the request, at the end of the handling, or after
its cap — and an @ classified when its frame is read holds from that moment."""

from __future__ import annotations

import asyncio

from pallas.onebot.lane_choice import LaneVerdict
from pallas.onebot.lanes import Lanes, admitted, releasing_hold


def lane_of(event: str) -> LaneVerdict:
    return LaneVerdict(event.startswith("@"), "test")


async def turns(n: int = 5) -> None:
    for _ in range(n):  # loop turns, no time passes
        await asyncio.sleep(0)


async def test_unaddressed_handlers_wait_until_the_at_sends_its_model_request() -> None:
    lanes = Lanes(normal=4, priority=2)
    running: list[str] = []
    model_called = asyncio.Event()
    request_may_go = asyncio.Event()

    async def complete() -> str:
        model_called.set()
        return "ok"

    llm = releasing_hold(complete)

    async def handle(event: str) -> None:
        running.append(event)
        if event.startswith("@"):
            await request_may_go.wait()  # the turn's local work
            await llm()
            await asyncio.sleep(10)  # the model answering: the hold is already released

    run = admitted(handle, lanes, lane_of, hold=60.0)  # type: ignore[arg-type]
    at = asyncio.ensure_future(run("@bot"))  # type: ignore[arg-type]
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
    gate = asyncio.Event()

    async def handle(event: str) -> None:
        if event == "@slow":
            await gate.wait()

    run = admitted(handle, lanes, lane_of, hold=60.0)  # type: ignore[arg-type]
    await run("@quick")  # type: ignore[arg-type]  # no model call (e.g. routed to silence)
    assert not lanes.holding
    slow = asyncio.ensure_future(run("@slow"))  # type: ignore[arg-type]
    await turns()
    assert lanes.holding
    await asyncio.sleep(0.1)
    assert not lanes.holding, "a turn that never reaches the model cannot hold the loop"
    gate.set()
    await slow
    assert not lanes.holding


async def test_an_at_classified_at_read_holds_from_then_and_is_not_classified_again() -> None:
    lanes = Lanes()
    calls: list[str] = []

    def counting_lane_of(event: str) -> LaneVerdict:
        calls.append(event)
        return lane_of(event)

    lanes.classify_at_read("@bot", counting_lane_of)  # type: ignore[arg-type]
    lanes.classify_at_read("hello", counting_lane_of)  # type: ignore[arg-type]
    assert lanes.holding, "the receive loop yields after every frame from now on"
    seen: list[str] = []

    async def handle(event: str) -> None:
        seen.append(event)

    run = admitted(handle, lanes, counting_lane_of, hold=60.0)  # type: ignore[arg-type]
    await run("@bot")  # type: ignore[arg-type]
    assert not lanes.holding
    await run("hello")  # type: ignore[arg-type]
    assert calls == ["@bot", "hello"] and seen == ["@bot", "hello"]


async def test_background_work_after_holds_waits_for_every_addressed_turn() -> None:
    """A group warm-up's next load (`Lanes.after_holds`) waits while any @ prepares."""
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
