"""Chat: every group message goes through Pallas's routing and, when it earns one, a reply;
every private message the edge lets through (`[private]`) is answered in private.

Thin on purpose: take the message's `TurnInput`, hand it to `ChatTurnService` with a OneBot
sender and the message's hold on the event loop (an @ holds it until its model request is out).
Runs last (order 10) in the one inbound entry.
"""

from __future__ import annotations

import logging

from nonebot.plugin import PluginMetadata

from pallas.onebot.arrival import Arrival
from pallas.onebot.plugin_parts import PALLAS, InboundHandler, PallasPlugin
from pallas.onebot.sender import sender_for

log = logging.getLogger("pallas.chat")

ORDER = 10


async def handle_group_message(arrival: Arrival) -> bool:
    event = arrival.event
    try:
        turn = arrival.turn()
    except ValueError as exc:
        log.warning("cannot route event %s: %s", event.message_id, exc)
        return False
    if turn.user_id == turn.bot_id:
        return False  # our own message echoed back by the implementation
    await arrival.loads.ready()  # the BPE ranks, jieba, the SDK: loaded at start-up
    replied = False
    try:
        outcome = await arrival.app.chat.handle(
            turn, sender_for(arrival.bot, turn), hold=arrival.hold
        )
        replied = bool(outcome.sent_ids)
    finally:
        arrival.counters.note_routed(replied)
    return False


__plugin_meta__ = PluginMetadata(
    name="llm_chat",
    description="Rule-routed, budgeted LLM replies in group chats",
    usage="@帕拉斯 or call 帕拉斯 / 牛牛",
    extra={PALLAS: PallasPlugin(inbound=InboundHandler("llm_chat", ORDER, handle_group_message))},
)
