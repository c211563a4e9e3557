"""Frames taken off the socket ahead of parsing (pallas/onebot/read_ahead.py): a frame that may
address the bot is parsed first, with its group's frames before it, in their order; every other
frame keeps its order; API responses never queue; nothing is dropped."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from pallas.onebot.read_ahead import MAX_FRAMES, FramePump, FrameScan, ReadAhead, Scanned

BOT = "2900000001"


def _msg(group: int, segments: list[dict[str, Any]] | str, *, ascii_only: bool = False) -> str:
    event = {
        "time": 1,
        "self_id": int(BOT),
        "post_type": "message",
        "message_type": "group",
        "group_id": group,
        "user_id": 5,
        "message": segments,
        "raw_message": "",
        "sender": {"user_id": 5, "nickname": "n"},
    }
    return json.dumps(event, ensure_ascii=ascii_only)


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "data": {"text": text}}


SCAN_CASES = [
    ("chatter", _msg(7, [_text("今天吃什么")]), 7, False),
    ("@ the bot", _msg(7, [{"type": "at", "data": {"qq": BOT}}, _text("在吗")]), 7, True),
    ("@ the bot, qq as a number", _msg(7, [{"type": "at", "data": {"qq": int(BOT)}}]), 7, True),
    (
        "@ someone whose id starts like the bot's",
        _msg(7, [{"type": "at", "data": {"qq": BOT + "5"}}]),
        7,
        False,
    ),
    ("@ in a CQ string", _msg(7, f"[CQ:at,qq={BOT}] 在吗"), 7, True),
    ("a reply segment", _msg(7, [{"type": "reply", "data": {"id": "9"}}, _text("嗯")]), 7, True),
    ('the word "reply" in text', _msg(7, [_text('he said "reply"')]), 7, False),
    ("an alias", _msg(7, [_text("帕拉斯 你好")]), 7, True),
    ("an alias, ASCII-escaped JSON", _msg(7, [_text("帕拉斯 你好")], ascii_only=True), 7, True),
    ("another group's alias", _msg(8, [_text("帕拉斯 你好")]), 8, False),
    ("a meta event", json.dumps({"post_type": "meta_event", "self_id": int(BOT)}), None, False),
]


@pytest.mark.parametrize(
    ("name", "frame", "group", "urgent"), SCAN_CASES, ids=[c[0] for c in SCAN_CASES]
)
def test_the_raw_look_at_a_frame(name: str, frame: str, group: int | None, urgent: bool) -> None:
    scan = FrameScan(BOT, lambda g: ("帕拉斯",) if g == 7 else ("牛牛",))
    scanned = scan.scan(frame)
    assert (scanned.group, scanned.urgent) == (group, urgent)
    assert scanned.data is frame


def _order(frames: list[tuple[str, int | None, bool]]) -> list[str]:
    ahead = ReadAhead()
    for name, group, urgent in frames:
        ahead.push(Scanned(name, group, urgent))
    out = []
    while ahead:
        out.append(str(ahead.pop().data))
    assert ahead.chars == 0
    return out


ORDER_CASES = [
    ("no @: arrival order", [("a1", 1, False), ("b1", 2, False), ("a2", 1, False)], "a1 b1 a2"),
    (
        "an @ first, with its group's frames before it",
        [("a1", 1, False), ("b1", 2, False), ("b2", 2, False), ("a2", 1, False), ("b@", 2, True)],
        "b1 b2 b@ a1 a2",
    ),
    (
        "two @s: the first one's group, then the second's",
        [("a1", 1, False), ("b@", 2, True), ("c1", 3, False), ("a@", 1, True), ("c2", 3, False)],
        "b@ a1 a@ c1 c2",
    ),
    (
        "every frame urgent: arrival order",
        [("a@", 1, True), ("b@", 2, True), ("a@2", 1, True), ("b@2", 2, True)],
        "a@ b@ a@2 b@2",
    ),
    (
        "frames without a group keep their place",
        [("meta", None, False), ("a1", 1, False), ("a@", 1, True), ("b1", 2, False)],
        "a1 a@ meta b1",
    ),
]


@pytest.mark.parametrize(("name", "frames", "order"), ORDER_CASES, ids=[c[0] for c in ORDER_CASES])
def test_read_ahead_order(
    name: str, frames: list[tuple[str, int | None, bool]], order: str
) -> None:
    assert _order(frames) == order.split()


class FakeSocket:
    def __init__(self, frames: list[str]) -> None:
        self.frames = list(frames)
        self.taken = 0

    async def receive(self) -> str:
        if not self.frames:
            raise ConnectionError("closed by peer")
        self.taken += 1
        return self.frames.pop(0)


async def test_the_pump_answers_responses_at_once_and_raises_the_close_after_the_last_frame() -> (
    None
):
    responses: list[str] = []
    frames = [
        _msg(1, [_text("a")]),
        json.dumps({"status": "ok", "retcode": 0, "data": None, "echo": "3"}),
        _msg(2, [{"type": "at", "data": {"qq": BOT}}]),
    ]
    socket = FakeSocket(frames)

    def respond(data: str | bytes) -> bool:
        responses.append(str(data))
        return True

    pump = FramePump(socket.receive, FrameScan(BOT, None).scan, respond)
    first = (await pump.next()).data
    await asyncio.sleep(0)  # the pump takes everything the socket has
    assert responses == [frames[1]], "the response did not wait for the frames before it"
    assert first == frames[0] or first == frames[2]
    rest = [(await pump.next())[0]]
    assert sorted([first, *rest]) == sorted([frames[0], frames[2]])
    with pytest.raises(ConnectionError):
        await pump.next()


async def test_the_pump_holds_at_most_max_frames() -> None:
    socket = FakeSocket([_msg(1, [_text(str(i))]) for i in range(MAX_FRAMES + 50)])
    pump = FramePump(socket.receive, FrameScan(BOT, None).scan, lambda data: False)
    first = (await pump.next()).data
    for _ in range(5):
        await asyncio.sleep(0)
    assert socket.taken <= MAX_FRAMES + 1, "the rest stays in the socket"
    got = [first]
    for _ in range(MAX_FRAMES + 49):
        got.append((await pump.next())[0])
    assert [json.loads(g)["message"][0]["data"]["text"] for g in got] == [
        str(i) for i in range(MAX_FRAMES + 50)
    ]
    pump.stop()


async def test_a_failing_scan_or_response_hook_never_ends_the_socket() -> None:
    frames = [_msg(1, [_text("a")]), json.dumps({"status": "ok", "echo": "5"})]
    socket = FakeSocket(frames)

    def broken_scan(data: str | bytes) -> Scanned:
        raise RuntimeError("broken alias source")

    def broken_respond(data: str | bytes) -> bool:
        raise RuntimeError("broken store")

    pump = FramePump(socket.receive, broken_scan, broken_respond)
    assert [(await pump.next())[0], (await pump.next())[0]] == frames  # both still parsed
    with pytest.raises(ConnectionError):
        await pump.next()


async def test_the_pump_says_which_frame_leads_an_at_and_which_is_the_at() -> None:
    at = _msg(2, [{"type": "at", "data": {"qq": BOT}}, _text(" 在吗")])
    frames = [_msg(1, [_text("a")]), _msg(2, [_text("b")]), at]
    socket = FakeSocket(frames)
    pump = FramePump(socket.receive, FrameScan(BOT, None).scan, lambda data: False)
    taken = [await pump.next() for _ in frames]
    urgent = {t.data: t.urgent for t in taken}
    assert urgent == {frames[0]: False, frames[1]: False, at: True}
    order = [t.data for t in taken]
    assert order.index(frames[1]) < order.index(at), "its group's line before it comes first"
    assert all(t.data == frames[1] for t in taken if t.lead)
    pump.stop()
