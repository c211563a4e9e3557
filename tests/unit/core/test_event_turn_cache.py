"""An event is converted to its TurnInput once and shared by the edge and the handlers."""

from __future__ import annotations

from typing import Any

from nonebot.adapters.onebot.v11 import Adapter, GroupMessageEvent
from nonebot.adapters.onebot.v11.event import Reply, Sender

from pallas.onebot import events
from pallas.onebot.events import forget_turn, turn_from_event

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


def test_converted_once_per_event() -> None:
    first = event()
    turn = turn_from_event(first)
    assert turn_from_event(first) is turn
    other = event()  # equal content, another event: its own conversion
    assert turn_from_event(other) is not turn
    assert turn_from_event(other) == turn


def test_converted_again_after_nonebot_marked_it_to_me() -> None:
    arriving = event("牛牛 在吗")
    at_read = turn_from_event(arriving)
    assert not at_read.to_me
    arriving.to_me = True  # NoneBot's nickname / @bot check, after the edge converted it
    handled = turn_from_event(arriving)
    assert handled.to_me
    assert turn_from_event(arriving) is handled


def test_converted_again_once_the_quoted_sender_is_known() -> None:
    arriving = event("不可以")
    at_read = turn_from_event(arriving)
    assert at_read.reply_to_user_id is None
    arriving.reply = Reply(
        time=1,
        message_type="group",
        message_id=9,
        real_id=9,
        sender=Sender(user_id=BOT),
        message=[],
    )
    assert turn_from_event(arriving).reply_to_user_id == BOT


def test_forgotten_when_handled_and_bounded() -> None:
    handled = event()
    turn = turn_from_event(handled)
    forget_turn(handled)
    assert turn_from_event(handled) is not turn
    forget_turn(handled)
    for n in range(events._CONVERTED_MAX + 10):  # never handled (no handler ran)
        turn_from_event(event(message_id=1000 + n))
    assert len(events._converted) <= events._CONVERTED_MAX
