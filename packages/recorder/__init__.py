"""Record every message the bot sends; the ones it receives are recorded by the edge.

Incoming messages are recorded at the OneBot edge, the moment their frame is parsed
(`pallas.onebot.edge.Edge.on_read`), not when a busy event loop gets round to the handlers (in
the stock adapter mode, when the inbound entry gets them: see `pallas.onebot.edge`). Sent
messages are recorded from NoneBot's API-call hook, a message another NoneBot plugin sent with
that plugin's id (`sent_by`: it is the plugin's, not the persona's words;
`pallas.onebot.neighbours.sending_plugin`). Messages that routing later ignores are stored
too. Storage is batched on the writer's own thread (`ThreadedMessageWriter`); nothing here
waits on the database.
"""

from __future__ import annotations

import logging
from typing import Any

from nonebot.adapters import Bot as BaseBot
from nonebot.adapters.onebot.v11 import Bot
from nonebot.plugin import PluginMetadata

from pallas.onebot.lifespan import app_or_none
from pallas.onebot.neighbours import sending_plugin
from pallas.onebot.recording import record_sent

log = logging.getLogger("pallas.recorder")


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
)
