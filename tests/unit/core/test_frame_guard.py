"""The OneBot edge: which frames the adapter may parse, and API results resolved only once."""

from __future__ import annotations

import asyncio
import json

import pytest

from pallas.onebot.adapter import deliver_result
from pallas.onebot.frame_guard import MAX_FRAME_BYTES, check_frame
from pallas.onebot.lane_choice import LaneVerdict
from pallas.onebot.lanes import Lanes, admitted

EVENT = {
    "post_type": "message",
    "message_type": "group",
    "self_id": 2_900_000_001,
    "user_id": 18_446_744_073_709_551_615,  # 20 digits: the widest id there is
    "group_id": 65_000_001,
    "message": [{"type": "text", "data": {"text": "9" * 5000}}],  # digits in text are fine
    "sender": {"user_id": 1, "nickname": "[{" * 50},
}


@pytest.mark.parametrize(
    ("frame", "reason"),
    [
        (json.dumps(EVENT), "ok"),
        (json.dumps(EVENT).encode(), "ok"),
        (json.dumps({"status": "ok", "data": {"message_id": -2_000_000_001}, "echo": "7"}), "ok"),
        ('{"x": ' + "[" * 20 + "]" * 20 + "}", "ok"),
        ('{"x": ' + "[" * 5000 + "]" * 5000 + "}", "too_deep"),
        ('{"x": ' + "[" * 40 + "]" * 40 + "}", "too_deep"),
        (b'{"x": ' + b"[" * 40 + b"]" * 40 + b"}", "too_deep"),
        ('{"user_id": ' + "9" * 5000 + "}", "int_too_long"),
        ('{"user_id": -' + "9" * 30 + "}", "int_too_long"),
        ('{"user_id": ', "not_json"),
        (b"\xff\xfe{}", "not_json"),
        ("[1, 2]", "not_object"),
        ('"text"', "not_object"),
        (json.dumps({"pad": "x" * MAX_FRAME_BYTES}), "too_large"),
        (json.dumps({"pad": "猫" * (MAX_FRAME_BYTES // 3)}), "too_large"),  # counted in bytes
    ],
)
def test_check_frame(frame: str | bytes, reason: str) -> None:
    verdict = check_frame(frame)
    assert verdict.reason == reason
    assert verdict.ok is (reason == "ok")


async def test_an_api_result_is_delivered_once_and_odd_echoes_are_ignored() -> None:
    class Store:
        def __init__(self) -> None:
            self._futures = {7: asyncio.get_running_loop().create_future()}

    store = Store()
    result = {"status": "ok", "echo": "7"}
    assert deliver_result(store, result) is True
    assert deliver_result(store, result) is False  # the same response again
    assert store._futures[7].result() is result
    assert deliver_result(store, {"echo": "8"}) is False  # nothing waits for it
    assert deliver_result(store, {"echo": "7" * 5000}) is False
    assert deliver_result(store, {"echo": None}) is False


async def test_admission_bounds_running_handlers_but_a_slow_one_gives_its_slot_back() -> None:
    lanes = Lanes(normal=2)
    slots = lanes.normal
    running: list[str] = []
    gate = asyncio.Event()

    async def handle(event: str) -> None:
        running.append(event)
        if event.startswith("slow"):
            await gate.wait()
        if event == "boom":
            raise ValueError("handler failed")

    run = admitted(handle, lanes, hold=0.3)  # type: ignore[arg-type]
    slow = [asyncio.ensure_future(run(f"slow{i}")) for i in range(3)]
    for _ in range(5):  # loop turns, no time passes
        await asyncio.sleep(0)
    assert running == ["slow0", "slow1"], "two slots: the third waits"
    await asyncio.sleep(0.6)  # timers fire in deadline order: the holds end first
    assert running == ["slow0", "slow1", "slow2"], "slow handlers give their slot back"
    with pytest.raises(ValueError, match="handler failed"):
        await run("boom")  # type: ignore[arg-type]
    gate.set()
    await asyncio.gather(*slow)
    assert not slots.locked()


async def test_an_addressed_event_skips_the_queue_of_unaddressed_ones() -> None:
    lanes = Lanes(normal=1, priority=1)
    running: list[str] = []
    gate = asyncio.Event()

    async def handle(event: str) -> None:
        running.append(event)
        await gate.wait()

    def lane_of(event: str) -> tuple[LaneVerdict, None]:
        return LaneVerdict(event.startswith("@"), "test"), None

    run = admitted(handle, lanes, lane_of, hold=60.0)  # type: ignore[arg-type]
    burst = [asyncio.ensure_future(run(f"msg{i}")) for i in range(50)]
    at = asyncio.ensure_future(run("@bot"))  # type: ignore[arg-type]
    for _ in range(5):
        await asyncio.sleep(0)
    assert running == ["msg0", "@bot"], "the @ runs beside the one admitted message"
    assert lanes.waiting == {"normal": 49, "priority": 0}
    gate.set()
    await asyncio.gather(*burst, at)
    assert len(running) == 51 and lanes.waiting == {"normal": 0, "priority": 0}
