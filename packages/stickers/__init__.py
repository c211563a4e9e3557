"""Stickers: collect the stickers members send, and name them in the background.

Thin: every group message's sticker segments go to `StickerService.collect` (after the recorder,
never blocking, never on the reply path); `StickerDescriber.run` downloads, dedupes and names
pending stickers on an apscheduler interval (`[stickers] describe_interval_s` in default.toml).
`/pallas sticker describe` runs the same job on demand.
"""

from __future__ import annotations

import logging

from nonebot import get_driver, on_message, require
from nonebot.adapters.onebot.v11 import GroupMessageEvent
from nonebot.params import Depends
from nonebot.plugin import PluginMetadata

require("nonebot_plugin_apscheduler")
from nonebot_plugin_apscheduler import scheduler  # noqa: E402

from pallas.app import PallasApp  # noqa: E402
from pallas.onebot.events import turn_from_event  # noqa: E402
from pallas.onebot.lifecycle import (  # noqa: E402
    app_or_none,
    register_lifecycle,
    runtime_or_none,
)

__plugin_meta__ = PluginMetadata(
    name="stickers",
    description="The group's own sticker pool: collected, named once, sent back as real stickers",
    usage="automatic; /pallas sticker list|ban|unban|delete|describe",
)

log = logging.getLogger("pallas.stickers")
register_lifecycle()

JOB_ID = "pallas_sticker_describe"

collector = on_message(priority=2, block=False)


@collector.handle()
async def collect_stickers(
    event: GroupMessageEvent, app: PallasApp | None = Depends(app_or_none)
) -> None:
    if app is None or not any(s.type in ("image", "mface") for s in event.original_message):
        return
    try:
        turn = turn_from_event(event)
        await app.stickers.collect(turn)
    except Exception:
        log.exception(
            "group %s: collecting stickers of %s failed", event.group_id, event.message_id
        )


async def _run() -> None:
    app = app_or_none()
    if app is None:
        return
    try:
        await app.describer.run()
    except Exception:
        log.exception("sticker job failed")


@get_driver().on_startup
async def _schedule() -> None:
    runtime = runtime_or_none()
    if runtime is None:
        log.error("sticker job not scheduled: the Pallas runtime did not start")
        return
    seconds = runtime.group_configs.get(0).stickers.describe_interval_s
    scheduler.add_job(
        _run,
        "interval",
        seconds=seconds,
        id=JOB_ID,
        max_instances=1,
        coalesce=True,
        replace_existing=True,
    )
    log.info("sticker job scheduled: every %ss", seconds)
