"""Recording at the edge: every group or private message the bot receives, and every group
message it sends (its private answers are kept in the private chat's session).

A received group message is handed to the message writer the moment its frame is parsed
(`Edge.on_read`), however far behind the busy event loop's handlers are (in the stock adapter
mode, when the inbound entry gets it: `pallas.onebot.edge`). A sent message is
recorded from NoneBot's API-call hook (`packages/recorder`). Storage is batched on the writer's
own thread; nothing here waits on the database.
"""

from __future__ import annotations

import logging
from typing import Any

from nonebot.adapters.onebot.v11 import Message

from pallas.core.turn import TurnInput
from pallas.onebot.convert import as_id, stored_message_from_sent, stored_message_from_turn
from pallas.runtime import PallasRuntime

log = logging.getLogger("pallas.recorder")


def record_received(runtime: PallasRuntime, turn: TurnInput) -> None:
    """The received group message, unless its group is configured not to be recorded; a
    private message is stored with group id 0 (unless the defaults say `record = false`)."""
    if not runtime.group_configs.get(turn.group_id).record:
        return
    runtime.writer.submit(stored_message_from_turn(turn))


def record_sent(
    runtime: PallasRuntime,
    bot_id: int,
    api: str,
    data: dict[str, Any],
    result: Any,
    *,
    sent_by: str = "",
) -> None:
    """A `send_msg` / `send_group_msg` the bot made to a group, once the call succeeded;
    `sent_by`: the other NoneBot plugin whose matcher sent it ("" for Pallas's own)."""
    if api not in ("send_msg", "send_group_msg"):
        return
    group_id = as_id(data.get("group_id"))
    if not group_id or (api == "send_msg" and data.get("message_type") == "private"):
        return
    message_id = as_id(result.get("message_id")) if isinstance(result, dict) else None
    if message_id is None:
        log.warning("sent message to group %s not recorded (no message_id returned)", group_id)
        return
    try:
        segments = _segments(data.get("message", ""))
    except Exception:  # a message object NoneBot accepted but we cannot read back
        log.exception("cannot parse outgoing message to group %s", group_id)
        segments = [{"type": "text", "data": {"text": str(data.get("message", ""))}}]
    runtime.writer.submit(
        stored_message_from_sent(
            bot_id=bot_id,
            group_id=group_id,
            message_id=message_id,
            segments=segments,
            time=runtime.clock.now(),
            nickname=next(iter(runtime.nicknames), ""),
            sent_by=sent_by,
        )
    )


def _segments(message: Any) -> list[dict[str, Any]]:
    if not isinstance(message, Message):
        message = Message(message)
    return [{"type": seg.type, "data": _without_payload(dict(seg.data))} for seg in message]


def _without_payload(data: dict[str, Any]) -> dict[str, Any]:
    """A sent sticker's `base64://` bytes are not stored with the message (the pool has them)."""
    return {
        k: "base64://…" if isinstance(v, str) and v.startswith("base64://") else v
        for k, v in data.items()
    }


__all__ = ["record_received", "record_sent"]
