"""An event is converted to its TurnInput once, when its frame is read, and the handlers reuse
that conversion while NoneBot's own checks have not changed what it depends on."""

from __future__ import annotations

from typing import Any

from nonebot.adapters.onebot.v11 import Adapter, GroupMessageEvent
from nonebot.adapters.onebot.v11.event import Reply, Sender

from pallas.onebot.events import convert_event, turn_from_event
from pallas.onebot.reads import EventReads, ReadRecord

BOT = 2_900_000_001


def event(text: str = "今天吃什么", message_id: int = 7, **extra: Any) -> GroupMessageEvent:
    frame = {
        "time": 1_700_000_000,
        "self_id": BOT,
        "post_type": "message",
        "message_type": "group",
        "sub_type": "normal",
        "message_id": message_id,
        "group_id": 123,
        "user_id": 456,
        "message": [{"type": "text", "data": {"text": text}}],
        "raw_message": text,
        "font": 0,
        "sender": {"user_id": 456, "nickname": "阿米娅"},
        **extra,
    }
    parsed = Adapter.json_to_event(frame)
    assert isinstance(parsed, GroupMessageEvent)
    return parsed


def test_the_read_conversion_is_reused_while_it_fits() -> None:
    first = event()
    at_read = convert_event(first)
    assert turn_from_event(first, at_read) is at_read  # the handlers reuse the edge's
    assert turn_from_event(first).turn == at_read.turn  # no earlier one: converted anew


def test_converted_again_after_nonebot_marked_it_to_me() -> None:
    arriving = event("牛牛 在吗")
    at_read = convert_event(arriving)
    assert not at_read.turn.to_me
    arriving.to_me = True  # NoneBot's nickname / @bot check, after the edge converted it
    handled = turn_from_event(arriving, at_read)
    assert handled is not at_read and handled.turn.to_me
    assert turn_from_event(arriving, handled) is handled


def test_converted_again_once_the_quoted_sender_is_known() -> None:
    arriving = event("不可以")
    at_read = convert_event(arriving)
    assert at_read.turn.reply_to_user_id is None
    arriving.reply = Reply(
        time=1,
        message_type="group",
        message_id=9,
        real_id=9,
        sender=Sender(user_id=BOT),
        message=[],
    )
    assert turn_from_event(arriving, at_read).turn.reply_to_user_id == BOT


def test_read_records_are_dropped_when_handled_and_bounded() -> None:
    reads = EventReads(max_records=50)
    handled = event()
    reads.keep(ReadRecord(handled, convert_event(handled), None, None))
    assert reads.get(handled) is not None and reads.get(event()) is None  # by identity
    reads.drop(handled)
    assert reads.get(handled) is None
    reads.drop(handled)  # twice is harmless
    for n in range(60):  # events whose handling never ran
        other = event(message_id=1000 + n)
        reads.keep(ReadRecord(other, None, None, None))
    assert len(reads) == 50
