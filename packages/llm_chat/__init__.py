"""Chat: every group message goes through Pallas's routing and, when it earns one, a reply;
every private message the edge lets through (`[private]`) is answered in private.

Thin on purpose: take the message's `TurnInput`, hand it to `ChatTurnService` with a OneBot
sender, the message's hold on the event loop (an @ holds it until its model request is out) and
what the bot's other plugins did with it. Runs last (order 10) in the one inbound entry.

The turn runs detached from NoneBot's dispatch (`Arrival.detached`): the handler returns once
the turn is started, so the plugins at a lower priority get the line at once instead of after
the model call and the paced bubbles. The line was recorded when its frame was read; the turn
routes it, and an addressed line waits (bounded) for the other plugins' verdict before its
model call (`pallas.onebot.neighbours`).
"""

from __future__ import annotations

import logging

from nonebot.plugin import PluginMetadata

from pallas.core.turn import TurnInput
from pallas.onebot.arrival import Arrival
from pallas.onebot.plugin_parts import PALLAS, InboundHandler, PallasPlugin
from pallas.onebot.sender import OneBotSender

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
    hold = arrival.hold
    if hold is not None:
        hold.adopt()  # released by the turn (its model request is out), not by the dispatch
    arrival.detached.spawn(
        _chat_turn(arrival, turn),
        f"chat turn (group {turn.group_id}, message {turn.message_id})",
        bounded=hold is None,  # an unaddressed line routes in turn; an @ never waits for them
    )
    return False


async def _chat_turn(arrival: Arrival, turn: TurnInput) -> None:
    replied = False
    try:
        await arrival.loads.ready()  # the BPE ranks, jieba, the SDK: loaded at start-up
        outcome = await arrival.app.chat.handle(
            turn, OneBotSender(arrival.bot), hold=arrival.hold, others=arrival.others
        )
        replied = bool(outcome.sent_ids)
    finally:
        if arrival.hold is not None:
            arrival.hold.release()
        arrival.counters.note_routed(replied)


__plugin_meta__ = PluginMetadata(
    name="llm_chat",
    description="Rule-routed, budgeted LLM replies in group chats",
    usage="@帕拉斯 or call 帕拉斯 / 牛牛",
    extra={PALLAS: PallasPlugin(inbound=InboundHandler("llm_chat", ORDER, handle_group_message))},
)
