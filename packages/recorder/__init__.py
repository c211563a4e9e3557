"""Record every group message the bot sees, and every message it sends.

Incoming group messages are recorded at the OneBot edge, the moment their frame is parsed
(`GuardedAdapter.received_hooks`), not when a busy event loop gets round to the handlers; with
the stock adapter (plugin tests) the first handler of the inbound entry records them instead.
Messages that routing later ignores are stored too. Storage is batched on the writer's own thread
(`ThreadedMessageWriter`); nothing here waits on the database.
"""

from __future__ import annotations

import logging
from typing import Any

from nonebot.adapters import Bot as BaseBot
from nonebot.adapters.onebot.v11 import Bot, Event, GroupMessageEvent, Message
from nonebot.plugin import PluginMetadata

from pallas.onebot import inbound
from pallas.onebot.adapter import GuardedAdapter
from pallas.onebot.convert import as_int, stored_message_from_sent, stored_message_from_turn
from pallas.onebot.events import turn_from_event
from pallas.onebot.inbound import Arrival
from pallas.onebot.lifecycle import register_lifecycle, runtime_or_none

__plugin_meta__ = PluginMetadata(
    name="recorder",
    description="Stores every group message seen or sent (the message table)",
    usage="automatic",
)

log = logging.getLogger("pallas.recorder")
register_lifecycle()

ORDER = 1


def record_at_edge(event: Event) -> None:
    if isinstance(event, GroupMessageEvent):
        _record(event)


if record_at_edge not in GuardedAdapter.received_hooks:
    GuardedAdapter.received_hooks.append(record_at_edge)


async def record_incoming(arrival: Arrival) -> bool:
    if not isinstance(arrival.bot.adapter, GuardedAdapter):  # else recorded at the edge
        _record(arrival.event)
    return False


inbound.register("recorder", ORDER, record_incoming)


def _record(event: GroupMessageEvent) -> None:
    runtime = runtime_or_none()
    if runtime is None:
        log.error("message %s arrived before start-up finished; not recorded", event.message_id)
        return
    if not runtime.group_configs.get(event.group_id).record:
        return
    try:
        turn = turn_from_event(event)
    except ValueError as exc:
        log.warning("unrecordable event %s: %s", event.message_id, exc)
        return
    runtime.writer.submit(stored_message_from_turn(turn))


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


@BaseBot.on_called_api
async def record_outgoing(
    bot: BaseBot, exception: Exception | None, api: str, data: dict[str, Any], result: Any
) -> None:
    if exception is not None or not isinstance(bot, Bot):
        return
    if api not in ("send_msg", "send_group_msg"):
        return
    group_id = as_int(data.get("group_id"))
    if not group_id or (api == "send_msg" and data.get("message_type") == "private"):
        return
    message_id = as_int(result.get("message_id")) if isinstance(result, dict) else None
    runtime = runtime_or_none()
    if runtime is None or message_id is None:
        log.warning("sent message to group %s not recorded (no message_id returned)", group_id)
        return
    try:
        segments = _segments(data.get("message", ""))
    except Exception:
        log.exception("cannot parse outgoing message to group %s", group_id)
        segments = [{"type": "text", "data": {"text": str(data.get("message", ""))}}]
    runtime.writer.submit(
        stored_message_from_sent(
            bot_id=int(bot.self_id),
            group_id=group_id,
            message_id=message_id,
            segments=segments,
            time=runtime.clock.now(),
            nickname=next(iter(runtime.nicknames), ""),
        )
    )
