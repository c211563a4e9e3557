"""Pallas's OneBot parse gives exactly the stock adapter's events, and refuses (one line, no
traceback) what the stock parse refuses — or turns into a base `Event` for a malformed message,
which then fails again inside NoneBot."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from nonebot.adapters.onebot.v11 import Adapter, MessageEvent
from nonebot.adapters.onebot.v11.event import Event

from pallas.onebot.adapter import GuardedAdapter
from pallas.onebot.event_parse import EventRefused, built_message, parse_event

BOT = 2_900_000_001


def group(message: Any, **extra: Any) -> dict[str, Any]:
    frame = {
        "time": 1_700_000_000,
        "self_id": BOT,
        "post_type": "message",
        "message_type": "group",
        "sub_type": "normal",
        "message_id": 7,
        "group_id": 123,
        "user_id": 456,
        "anonymous": None,
        "message": message,
        "raw_message": "raw",
        "font": 0,
        "sender": {"user_id": 456, "nickname": "阿米娅", "card": "", "role": "member"},
    }
    frame.update(extra)
    return frame


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "data": {"text": value}}


FRAMES: list[tuple[str, dict[str, Any]]] = [
    ("text", group([text("今天吃什么")])),
    ("at bot + text", group([{"type": "at", "data": {"qq": str(BOT)}}, text(" 在吗")])),
    ("at all", group([{"type": "at", "data": {"qq": "all"}}, text("开会")])),
    ("reply", group([{"type": "reply", "data": {"id": "99"}}, text("不可以")])),
    (
        "image",
        group([{"type": "image", "data": {"file": "a.jpg", "url": "https://x/a.jpg", "sub": 1}}]),
    ),
    ("face", group([{"type": "face", "data": {"id": "178"}}, text("哈")])),
    ("forward", group([{"type": "forward", "data": {"id": "fw1"}}])),
    ("mface", group([{"type": "mface", "data": {"summary": "[开心]", "emoji_id": "1"}}])),
    ("odd unicode", group([text("\u202e\u0000👨‍👩‍👧 \ud7ff 零宽\u200b")])),
    ("empty message", group([])),
    ("nested data", group([{"type": "json", "data": {"data": {"a": [1, {"b": None}]}}}])),
    ("extra segment keys", group([{"type": "text", "data": {"text": "x"}, "extra": 1}])),
    ("numeric data values", group([{"type": "at", "data": {"qq": BOT, "name": 3}}])),
    ("CQ string message", group("[CQ:at,qq=2900000001] 你好&#91;")),
    ("private", {**group([text("私聊")]), "message_type": "private", "sub_type": "friend"}),
    ("anonymous group", group([text("匿名")], anonymous={"id": 1, "name": "匿", "flag": "f"})),
    ("group id missing", {k: v for k, v in group([text("x")]).items() if k != "group_id"}),
    ("user id a word", group([text("x")], user_id="abc")),
    ("unknown post type", {"post_type": "nonsense", "time": 1, "self_id": BOT}),
    (
        "notice",
        {
            "time": 1,
            "self_id": BOT,
            "post_type": "notice",
            "notice_type": "group_increase",
            "sub_type": "approve",
            "group_id": 1,
            "operator_id": 2,
            "user_id": 3,
        },
    ),
    (
        "meta heartbeat",
        {
            "time": 1,
            "self_id": BOT,
            "post_type": "meta_event",
            "meta_event_type": "heartbeat",
            "status": {"online": True, "good": True},
            "interval": 5000,
        },
    ),
]


def segments(message: Any) -> list[tuple[str, dict[str, Any]]]:
    return [(seg.type, seg.data) for seg in message]


@pytest.mark.parametrize(("name", "frame"), FRAMES, ids=[n for n, _ in FRAMES])
def test_same_event_as_the_stock_adapter(name: str, frame: dict[str, Any]) -> None:
    stock = Adapter.json_to_event(copy.deepcopy(frame))
    if stock is None or (frame.get("post_type") == "message" and type(stock) is Event):
        with pytest.raises(EventRefused):
            parse_event(GuardedAdapter, copy.deepcopy(frame))
        return
    ours = parse_event(GuardedAdapter, copy.deepcopy(frame))
    assert type(ours) is type(stock)
    assert ours.model_dump() == stock.model_dump()
    assert repr(ours) == repr(stock)
    if isinstance(stock, MessageEvent):
        assert isinstance(ours, MessageEvent)
        assert type(ours.message) is type(stock.message)
        assert segments(ours.message) == segments(stock.message)
        assert segments(ours.original_message) == segments(stock.original_message)
        assert ours.message is not ours.original_message
        assert ours.message[0] is not ours.original_message[0] if len(ours.message) else True


def test_the_callers_frame_is_left_as_it_was() -> None:
    frame = group([text("x")])
    before = copy.deepcopy(frame)
    event = parse_event(GuardedAdapter, frame)
    assert frame == before
    assert isinstance(event, MessageEvent)
    event.message[0].data["text"] = "changed"  # the event's data is its own
    assert frame["message"][0]["data"]["text"] == "x"


@pytest.mark.parametrize("segments_in", ["[CQ:face,id=1]", None, 5])
def test_what_is_not_a_list_is_left_to_the_models_validation(segments_in: Any) -> None:
    assert built_message(segments_in) is None


@pytest.mark.parametrize(
    "malformed",
    [
        {"type": "text"},  # no data
        {"type": "text", "data": None},
        {"type": 5, "data": {}},
        "hello",
        {"type": "text", "data": ["x"]},
        {"type": "at", "data": {1: "x"}},
    ],
)
def test_a_malformed_segment_is_dropped_and_the_message_kept(malformed: Any) -> None:
    """The stock validation refused the whole message (lost, with a traceback); the
    well-formed segments around a malformed one are kept and recorded."""
    event = parse_event(GuardedAdapter, group([text("前"), malformed, text("后")]))
    assert isinstance(event, MessageEvent)
    assert segments(event.message) == [("text", {"text": "前"}), ("text", {"text": "后"})]


def test_the_guarded_adapter_parses_with_it() -> None:
    frame = group([{"type": "at", "data": {"qq": str(BOT)}}, text(" 在吗")])
    event = GuardedAdapter.json_to_event(copy.deepcopy(frame))
    assert event is not None
    assert event.model_dump() == Adapter.json_to_event(copy.deepcopy(frame)).model_dump()  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("segment_text", "kept"),
    [(None, []), (5, [("text", {"text": "5"})]), ("x", [("text", {"text": "x"})])],
)
def test_a_text_segment_is_always_text(segment_text: Any, kept: list[Any]) -> None:
    """A null text crashed NoneBot's to-me check (`.strip()` on None) in a task nobody awaited:
    a traceback per hostile event. It is dropped; a number keeps what it says."""
    event = parse_event(GuardedAdapter, group([{"type": "text", "data": {"text": segment_text}}]))
    assert isinstance(event, MessageEvent) and segments(event.message) == kept


@pytest.mark.parametrize(
    ("frame", "says"),
    [
        (group([text("x")], user_id="abc"), "message event (message_id 7, group_id 123, user_id"),
        ({"post_type": "message", "message_type": "group"}, "message event (no ids)"),
        ({"post_type": "notice", "notice_type": "group_increase", "group_id": "x"}, "notice"),
    ],
)
def test_a_refusal_names_the_event_and_the_reason(frame: dict[str, Any], says: str) -> None:
    with pytest.raises(EventRefused) as refused:
        parse_event(GuardedAdapter, frame)
    assert str(refused.value).startswith(says)
    assert "problem(s)" in refused.value.reason


@pytest.mark.parametrize(
    ("frame", "field", "says"),
    [
        ({**group([text("x")]), "message_type": 7}, "type", "no event type for"),
        ({**group([text("x")]), "sub_type": ["a"], "post_type": 3}, "type", "no event type"),
        ({**group([text("x")]), "post_type": None}, "type", "no event type for"),
        ({**group([text("x")]), "self_id": 2**70}, "self_id", "self_id out of range"),
        ({**group([text("x")]), "group_id": -(2**64)}, "group_id", "group_id out of range"),
        ({**group([text("x")]), "user_id": str(2**80)}, "user_id", "user_id out of range"),
        (
            {
                "post_type": "notice",
                "notice_type": "group_recall",
                "group_id": 1,
                "user_id": 2,
                "operator_id": 2,
                "message_id": 3,
                "self_id": BOT,
                "time": "yesterday",
            },
            "time",
            "time: ",
        ),
    ],
)
def test_frames_the_adapter_cannot_type_are_refused_by_the_field_at_fault(
    frame: dict[str, Any], field: str, says: str
) -> None:
    """Found by the event fuzzer (benchmarks/hostile.py): a type field that is not a string made
    the adapter's type lookup raise a TypeError (a traceback per event), and an id beyond 64
    bits passed the models and failed at the database insert."""
    with pytest.raises(EventRefused) as refused:
        parse_event(GuardedAdapter, frame)
    assert refused.value.field == field
    assert says in refused.value.reason
    assert refused.value.kind.endswith(f":{field}")


@pytest.mark.parametrize(
    ("fault", "field", "kept"),
    [
        ({"message": 5}, "message", {"raw_message": "raw"}),
        ({"message": None}, "message", {"raw_message": "raw"}),
        ({"sub_type": ["a"]}, "sub_type", {"sub_type": "normal"}),
        ({"time": "yesterday"}, "time", {}),
        ({"time": 2**70}, "time", {}),
        ({"time": float("nan")}, "time", {}),
        ({"time": -5}, "time", {}),
        ({"sender": None}, "sender", {"sender": {"user_id": 456}}),
        ({"sender": {"user_id": 456, "nickname": ["x"], "card": "卡"}}, "sender", {}),
        ({"font": "x"}, "font", {"font": 0}),
        ({"raw_message": 5}, "raw_message", {"raw_message": ""}),
        ({"anonymous": 5}, "anonymous", {"anonymous": None}),
        ({"reply": 5}, "reply", {"reply": None}),
        ({"to_me": "yes"}, "to_me", {"to_me": False}),
    ],
)
def test_a_message_whose_only_fault_is_a_droppable_field_is_kept(
    fault: dict[str, Any], field: str, kept: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 44: only a frame that is no OneBot event is refused. A message whose time, sender,
    font, raw text, sub-type or message field cannot be what the models want gets its default
    (a time: when it was read), is kept, and the repair is one warning naming the field."""
    event = parse_event(GuardedAdapter, {**group([text("留下")]), **fault})
    assert isinstance(event, MessageEvent)
    assert event.message_id == 7 and event.user_id == 456
    for name, value in kept.items():
        got = getattr(event, name)
        assert (got.model_dump(exclude_none=True) if hasattr(got, "model_dump") else got) == value
    if field == "time":
        assert 1_700_000_000 < event.time < 2**32
    assert f"with its default for {field}" in caplog.text
