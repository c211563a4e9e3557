"""Sending through the OneBot v11 bot (the edge side of `GroupSender`)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from typing import Any

from nonebot.adapters.onebot.v11 import Bot, Message, MessageSegment

from pallas.core.turn import TurnInput
from pallas.onebot.convert import as_id

log = logging.getLogger("pallas.onebot")


class OneBotGroupSender:
    def __init__(self, bot: Bot) -> None:
        self._bot = bot

    async def send_group(self, group_id: int, segments: list[dict[str, Any]]) -> int | None:
        return await _sent_id(
            "send_group_msg",
            group_id,
            self._bot.send_group_msg(group_id=group_id, message=_message(segments)),
        )

    async def send_private(self, user_id: int, text: str) -> bool:
        """A private text message (admin notices); False when sending failed."""
        try:
            await self._bot.send_private_msg(user_id=user_id, message=Message(text))
        except Exception as exc:
            log.warning("send_private_msg to %s failed: %r", user_id, exc)
            return False
        return True


class OneBotPrivateSender(OneBotGroupSender):
    """A private chat's answers (`send_private_msg` to the user): the turn's `GroupSender`
    for group id 0, so the spine delivers a private turn like a group one."""

    def __init__(self, bot: Bot, user_id: int) -> None:
        super().__init__(bot)
        self._user_id = user_id

    async def send_group(self, group_id: int, segments: list[dict[str, Any]]) -> int | None:
        # the first bubble's quote is kept; an @ means nothing in a private chat
        message = _message([s for s in segments if s["type"] != "at"])
        user_id = self._user_id
        return await _sent_id(
            "send_private_msg",
            user_id,
            self._bot.send_private_msg(user_id=user_id, message=message),
        )


def _message(segments: list[dict[str, Any]]) -> Message:
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


def sender_for(bot: Bot, turn: TurnInput) -> OneBotGroupSender:
    """Where a turn's answers go: its group, or the private chat with its user."""
    if turn.is_private:
        return OneBotPrivateSender(bot, turn.user_id)
    return OneBotGroupSender(bot)
