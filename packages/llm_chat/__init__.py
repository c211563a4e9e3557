"""Group chat: every group message goes through Pallas's routing and, when it earns one, a reply.

Thin on purpose: build the `TurnInput`, hand it to `ChatTurnService` with a OneBot sender.
"""

from __future__ import annotations

import asyncio
import logging

from nonebot import get_driver, on_message
from nonebot.adapters.onebot.v11 import Bot, GroupMessageEvent
from nonebot.params import Depends
from nonebot.plugin import PluginMetadata

from pallas.app import PallasApp
from pallas.core.tokens import get_encoding
from pallas.onebot.events import turn_from_event
from pallas.onebot.lifecycle import app_or_none, register_lifecycle
from pallas.onebot.sender import OneBotGroupSender
from pallas.product.llm.chat_turn import ChatTurnService
from pallas.product.llm.provider.image_fetch import default_ssl_context

__plugin_meta__ = PluginMetadata(
    name="llm_chat",
    description="Rule-routed, budgeted LLM replies in group chats",
    usage="@帕拉斯 or call 帕拉斯 / 牛牛",
)

log = logging.getLogger("pallas.chat")
register_lifecycle()


def chat_service() -> ChatTurnService | None:
    """The app's chat service (None until start-up has run)."""
    app = app_or_none()
    return app.chat if app is not None else None


@get_driver().on_startup
async def _warm_up() -> None:
    # Loading the BPE ranks (~0.25 s) and the CA bundle for image downloads (~45 ms) at
    # start-up, off the event loop, not on the first reply.
    await asyncio.to_thread(get_encoding)
    await asyncio.to_thread(default_ssl_context)


chat = on_message(priority=10, block=False)


@chat.handle()
async def handle_group_message(
    bot: Bot, event: GroupMessageEvent, app: PallasApp | None = Depends(app_or_none)
) -> None:
    if app is None:
        return
    service = app.chat
    try:
        turn = turn_from_event(event)
    except ValueError as exc:
        log.warning("cannot route event %s: %s", event.message_id, exc)
        return
    if turn.user_id == turn.bot_id:
        return  # our own message echoed back by the implementation
    await service.handle(turn, OneBotGroupSender(bot))
