"""Retention on a schedule: every hour, each group's old rows pruned by its `[retention]`.

Thin: runs `PallasApp.retention` (`pallas.features.retention.RetentionJob`) with apscheduler,
the first run ten minutes after start-up (not in the start-up rush). Nothing is pruned unless a
`*_days` key is set (default: keep everything, as before).
"""

from __future__ import annotations

import datetime as dt
import logging

from nonebot import require
from nonebot.plugin import PluginMetadata

require("nonebot_plugin_apscheduler")
from nonebot_plugin_apscheduler import scheduler  # noqa: E402

from pallas.app_model import PallasApp  # noqa: E402
from pallas.onebot.plugin_parts import PALLAS, PallasPlugin  # noqa: E402

log = logging.getLogger("pallas.retention")

JOB_ID = "pallas_retention"
INTERVAL_S = 3600
FIRST_RUN_AFTER_S = 600


async def schedule(app: PallasApp) -> None:
    job = app.retention
    if job is None:
        return

    async def run() -> None:
        try:
            await job.run()
        except Exception:
            log.exception("retention run failed; the next one retries")

    first = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=FIRST_RUN_AFTER_S)
    scheduler.add_job(
        run, "interval", seconds=INTERVAL_S, id=JOB_ID, max_instances=1, coalesce=True,
        replace_existing=True, next_run_time=first,
    )  # fmt: skip


async def unschedule(app: PallasApp) -> None:
    if scheduler.get_job(JOB_ID) is not None:
        scheduler.remove_job(JOB_ID)


__plugin_meta__ = PluginMetadata(
    name="retention",
    description="Prunes each group's old messages, sessions, snapshots and usage rows hourly",
    usage="[retention] messages_days / sessions_days / snapshots_days / usage_days",
    extra={PALLAS: PallasPlugin(on_ready=(schedule,), on_shutdown=(unschedule,))},
)
