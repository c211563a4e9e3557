"""Sending through the OneBot v11 bot: the live `pallas.core.sending.Sender`."""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from typing import Any

from nonebot.adapters.onebot.v11 import Bot, Message, MessageSegment

from pallas.core.sending import SegmentDict, Target
from pallas.onebot.convert import as_id

log = logging.getLogger("pallas.onebot")


class OneBotSender:
    """`send_group_msg` to a group target, `send_private_msg` to a private one."""

    def __init__(self, bot: Bot) -> None:
        self._bot = bot

    async def send(self, target: Target, segments: list[SegmentDict]) -> int | None:
        if not target.is_private:
            return await _sent_id(
                "send_group_msg",
                target.id,
                self._bot.send_group_msg(group_id=target.id, message=_message(segments)),
            )
        # a private turn's first bubble keeps its quote; an @ means nothing in a private chat
        message = _message([s for s in segments if s["type"] != "at"])
        return await _sent_id(
            "send_private_msg",
            target.id,
            self._bot.send_private_msg(user_id=target.id, message=message),
        )


def _message(segments: list[SegmentDict]) -> Message:
    return Message([MessageSegment(s["type"], dict(s.get("data") or {})) for s in segments])


async def _sent_id(api: str, target: int, call: Awaitable[Any]) -> int | None:
    """The message id a send API call answered, or None (logged) when it failed or said none."""
    try:
        result = await call
    except Exception as exc:
        log.warning("%s to %s failed: %r", api, target, exc)
        return None
    message_id = as_id(result.get("message_id")) if isinstance(result, dict) else None
    if message_id is None:
        log.warning("%s to %s returned no message_id: %r", api, target, result)
    return message_id
