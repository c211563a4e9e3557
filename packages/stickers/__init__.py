"""Stickers: collect the stickers members send, and name them in the background.

Thin: every group message's sticker segments go to `StickerService.collect` (order 2 in the one
inbound entry, never stopping the message, never on the reply path); `StickerDescriber.run`
downloads, dedupes and names pending stickers on an apscheduler interval
(`[stickers] describe_interval_s` in default.toml), scheduled once the app is up.
`/pallas sticker describe` runs the same job on demand.
"""

from __future__ import annotations

import logging

from nonebot import require
from nonebot.plugin import PluginMetadata

require("nonebot_plugin_apscheduler")
from nonebot_plugin_apscheduler import scheduler  # noqa: E402

from pallas.app_model import PallasApp  # noqa: E402
from pallas.onebot.arrival import Arrival  # noqa: E402
from pallas.onebot.plugin_parts import PALLAS, InboundHandler, PallasPlugin  # noqa: E402

log = logging.getLogger("pallas.stickers")

JOB_ID = "pallas_sticker_describe"

ORDER = 2


async def collect_stickers(arrival: Arrival) -> bool:
    event = arrival.event
    if not any(s.type in ("image", "mface") for s in event.original_message):
        return False
    try:
        await arrival.app.stickers.collect(arrival.turn())
    except Exception:  # collecting is a side job: the message goes on
        log.exception(
            "group %s: collecting stickers of %s failed", arrival.group_id, event.message_id
        )
    return False


async def schedule(app: PallasApp) -> None:
    async def run() -> None:
        try:
            await app.describer.run()
        except Exception:  # the next interval tries again
            log.exception("sticker job failed")

    seconds = app.runtime.group_configs.get(0).stickers.describe_interval_s
    scheduler.add_job(
        run,
        "interval",
        seconds=seconds,
        id=JOB_ID,
        max_instances=1,
        coalesce=True,
        replace_existing=True,
    )
    log.info("sticker job scheduled: every %ss", seconds)


async def unschedule(app: PallasApp) -> None:
    if scheduler.get_job(JOB_ID) is not None:
        scheduler.remove_job(JOB_ID)


__plugin_meta__ = PluginMetadata(
    name="stickers",
    description="The group's own sticker pool: collected, named once, sent back as real stickers",
    usage="automatic; /pallas sticker list|ban|unban|delete|describe",
    extra={
        PALLAS: PallasPlugin(
            inbound=InboundHandler("stickers", ORDER, collect_stickers),
            on_ready=(schedule,),
            on_shutdown=(unschedule,),
        )
    },
)
