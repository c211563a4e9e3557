"""NoneBot OneBot v11 event objects → core values."""

from __future__ import annotations

from typing import Any

from nonebot.adapters.onebot.v11 import GroupMessageEvent, MessageEvent

from pallas.core.turn import TurnInput
from pallas.onebot.convert import as_int, turn_input_from_event


def event_payload(event: MessageEvent) -> dict[str, Any]:
    """The event as OneBot sent it; `original_message` still has the @bot and reply segments
    that the adapter strips from `event.message`."""
    sender = event.sender
    return {
        "self_id": event.self_id,
        "user_id": event.user_id,
        "message_id": event.message_id,
        "group_id": event.group_id if isinstance(event, GroupMessageEvent) else 0,
        "time": event.time,
        "raw_message": event.raw_message,
        "sender": {"card": sender.card, "nickname": sender.nickname, "role": sender.role},
        "message": [{"type": seg.type, "data": dict(seg.data)} for seg in event.original_message],
    }


def turn_from_event(event: MessageEvent) -> TurnInput:
    reply_user = None
    if event.reply is not None and event.reply.sender is not None:
        reply_user = as_int(event.reply.sender.user_id)
    return turn_input_from_event(
        event_payload(event), to_me=event.to_me, reply_to_user_id=reply_user
    )
