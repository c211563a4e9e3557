"""Record every group message the bot sees, and every message it sends.

Incoming group messages are recorded at the OneBot edge, the moment their frame is parsed
(`pallas.onebot.edge.Edge.on_read`), not when a busy event loop gets round to the handlers; with
the stock adapter (plugin tests) this plugin's handler, first in the inbound entry, records them
instead. Sent messages are recorded from NoneBot's API-call hook, a message another NoneBot
plugin sent with that plugin's id (`sent_by`: it is the plugin's, not the persona's words;
`pallas.onebot.neighbours.sending_plugin`). Messages that routing later
ignores are stored too. Storage is batched on the writer's own thread
(`ThreadedMessageWriter`); nothing here waits on the database.
"""

from __future__ import annotations

import logging
from typing import Any

from nonebot.adapters import Bot as BaseBot
from nonebot.adapters.onebot.v11 import Bot
from nonebot.plugin import PluginMetadata

from pallas.onebot.adapter import GuardedAdapter
from pallas.onebot.arrival import Arrival
from pallas.onebot.lifespan import app_or_none
from pallas.onebot.neighbours import sending_plugin
from pallas.onebot.plugin_parts import PALLAS, InboundHandler, PallasPlugin
from pallas.onebot.recording import record_received, record_sent

log = logging.getLogger("pallas.recorder")

ORDER = 1


async def record_incoming(arrival: Arrival) -> bool:
    if isinstance(arrival.bot.adapter, GuardedAdapter):
        return False  # recorded at the edge when its frame was read
    try:
        turn = arrival.turn()
    except ValueError as exc:
        log.warning("unrecordable event %s: %s", arrival.event.message_id, exc)
        return False
    record_received(arrival.app.runtime, turn)
    return False


@BaseBot.on_called_api
async def record_outgoing(
    bot: BaseBot, exception: Exception | None, api: str, data: dict[str, Any], result: Any
) -> None:
    if exception is not None or not isinstance(bot, Bot):
        return
    app = app_or_none()
    if app is None:
        log.warning("a message sent before start-up finished is not recorded (%s)", api)
        return
    record_sent(app.runtime, int(bot.self_id), api, data, result, sent_by=sending_plugin() or "")


__plugin_meta__ = PluginMetadata(
    name="recorder",
    description="Stores every group message seen or sent (the message table)",
    usage="automatic",
    extra={PALLAS: PallasPlugin(inbound=InboundHandler("recorder", ORDER, record_incoming))},
)
