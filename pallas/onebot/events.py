"""NoneBot OneBot v11 event objects → core values."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from nonebot.adapters.onebot.v11 import GroupMessageEvent, MessageEvent

from pallas.core.turn import TurnInput
from pallas.onebot.convert import as_id, turn_input_from_event


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


@dataclass(frozen=True, slots=True)
class ConvertedTurn:
    """An event's `TurnInput` and the two things NoneBot may still change on the event after
    the conversion (its `to_me`, after an @bot or a leading nickname; the quoted message's
    sender, after `get_msg`)."""

    to_me: bool
    reply_user: int | None
    turn: TurnInput

    def still_fits(self, event: MessageEvent) -> bool:
        return self.to_me == event.to_me and self.reply_user == _reply_user(event)


def _reply_user(event: MessageEvent) -> int | None:
    if event.reply is not None and event.reply.sender is not None:
        return as_id(event.reply.sender.user_id)
    return None


def with_line_key(converted: ConvertedTurn, line_key: str) -> ConvertedTurn:
    return replace(converted, turn=replace(converted.turn, line_key=line_key))


def convert_event(event: MessageEvent) -> ConvertedTurn:
    """The event's `TurnInput` as it stands now (raises ValueError for an unusable event)."""
    reply_user = _reply_user(event)
    turn = turn_input_from_event(
        event_payload(event), to_me=event.to_me, reply_to_user_id=reply_user
    )
    return ConvertedTurn(event.to_me, reply_user, turn)


def turn_from_event(event: MessageEvent, earlier: ConvertedTurn | None = None) -> ConvertedTurn:
    """`earlier` (the conversion made when the frame was read) while it still fits the event,
    else a new conversion: an event is converted once at the edge and once more only when
    NoneBot's own checks changed what the turn depends on."""
    if earlier is not None and earlier.still_fits(event):
        return earlier
    converted = convert_event(event)
    if earlier is not None and earlier.turn.line_key:  # numbered once, at read
        turn = replace(converted.turn, line_key=earlier.turn.line_key)
        converted = replace(converted, turn=turn)
    return converted


__all__ = ["ConvertedTurn", "convert_event", "event_payload", "turn_from_event", "with_line_key"]
