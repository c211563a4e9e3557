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


# id(event) → (event, its to_me, its quoted sender, the turn); see `turn_from_event`
_converted: dict[int, tuple[MessageEvent, bool, int | None, TurnInput]] = {}
_CONVERTED_MAX = 8192  # events between their frame's reading and the end of their handling


def _reply_user(event: MessageEvent) -> int | None:
    if event.reply is not None and event.reply.sender is not None:
        return as_int(event.reply.sender.user_id)
    return None


def turn_from_event(event: MessageEvent) -> TurnInput:
    """The event's `TurnInput`, converted once per event: the edge (recorder, lane verdict)
    and the handlers share it. It is converted again only when NoneBot's own checks changed
    what it depends on since (`to_me` after an @bot or a leading nickname, the quoted message's
    sender after `get_msg`); `forget_turn` drops it when the handling ends."""
    reply_user = _reply_user(event)
    cached = _converted.get(id(event))
    if (
        cached is not None
        and cached[0] is event
        and cached[1] == event.to_me
        and cached[2] == reply_user
    ):
        return cached[3]
    turn = turn_input_from_event(
        event_payload(event), to_me=event.to_me, reply_to_user_id=reply_user
    )
    if len(_converted) >= _CONVERTED_MAX:  # events that never reached a handler: oldest first
        del _converted[next(iter(_converted))]
    _converted[id(event)] = (event, event.to_me, reply_user, turn)
    return turn


def forget_turn(event: MessageEvent) -> None:
    """The event's handling ended: its kept conversion goes."""
    cached = _converted.get(id(event))
    if cached is not None and cached[0] is event:
        del _converted[id(event)]
