"""Group chat: every group message goes through Pallas's routing and, when it earns one, a reply.

Thin on purpose: build the `TurnInput`, hand it to `ChatTurnService` with a OneBot sender. Runs
last (order 10) in the one inbound entry (`pallas.onebot.inbound`).
"""

from __future__ import annotations

import logging

from nonebot.plugin import PluginMetadata

from pallas.core.tokens import get_encoding
from pallas.onebot import inbound
from pallas.onebot import startup_loads as warmup
from pallas.onebot.counters import COUNTERS
from pallas.onebot.inbound import Arrival
from pallas.onebot.lifecycle import app_or_none, register_lifecycle
from pallas.onebot.sender import OneBotGroupSender
from pallas.providers.image_fetch import default_ssl_context
from pallas.turn.service import ChatTurnService

__plugin_meta__ = PluginMetadata(
    name="llm_chat",
    description="Rule-routed, budgeted LLM replies in group chats",
    usage="@帕拉斯 or call 帕拉斯 / 牛牛",
)

log = logging.getLogger("pallas.chat")
register_lifecycle()

ORDER = 10


def chat_service() -> ChatTurnService | None:
    """The app's chat service (None until start-up has run)."""
    app = app_or_none()
    return app.chat if app is not None else None


# The BPE ranks (~0.25 s) and the CA bundle for image downloads (~45 ms), loaded in the
# background at start-up (not before listening), awaited by the first turn if still loading.
warmup.add(get_encoding)
warmup.add(default_ssl_context)


async def handle_group_message(arrival: Arrival) -> bool:
    event = arrival.event
    try:
        turn = arrival.turn()
    except ValueError as exc:
        log.warning("cannot route event %s: %s", event.message_id, exc)
        return False
    if turn.user_id == turn.bot_id:
        return False  # our own message echoed back by the implementation
    await warmup.ready()
    replied = False
    try:
        outcome = await arrival.app.chat.handle(turn, OneBotGroupSender(arrival.bot))
        replied = bool(getattr(outcome, "sent_ids", ()))
    finally:
        COUNTERS.note_routed(replied)
    return False


inbound.register("llm_chat", ORDER, handle_group_message)
