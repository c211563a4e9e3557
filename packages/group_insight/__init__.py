"""Group insight sweep on a schedule: learn each group's pairs, labels, strategies and rhythm.

Thin: schedules `pallas.features.learning.group_insight_processor.scheduled_sweep` with
apscheduler every `[learning] sweep_interval_seconds` (config/groups/default.toml; a changed
value is picked up after the next run). `/pallas learn now` runs the same sweep on demand.
"""

from __future__ import annotations

import logging

from nonebot import get_driver, require
from nonebot.plugin import PluginMetadata

require("nonebot_plugin_apscheduler")
from nonebot_plugin_apscheduler import scheduler  # noqa: E402

from pallas.features.learning import scheduled_sweep, sweep_interval_seconds  # noqa: E402
from pallas.onebot.lifecycle import app_or_none, register_lifecycle  # noqa: E402

__plugin_meta__ = PluginMetadata(
    name="group_insight",
    description="Background learning of each group's expression, rhythm and reply strategies",
    usage="automatic; /pallas learn now|status",
)

log = logging.getLogger("pallas.learning")
register_lifecycle()

JOB_ID = "pallas_group_insight"


async def _run() -> None:
    app = app_or_none()
    if app is None:
        return
    await scheduled_sweep(app.insight)
    job = scheduler.get_job(JOB_ID)
    seconds = sweep_interval_seconds(app.insight)
    interval = getattr(getattr(job, "trigger", None), "interval", None)
    if job is not None and interval is not None and interval.total_seconds() != seconds:
        scheduler.reschedule_job(JOB_ID, trigger="interval", seconds=seconds)
        log.info("group insight sweep rescheduled: every %ss", seconds)


@get_driver().on_startup
async def _schedule() -> None:
    app = app_or_none()
    if app is None:
        log.error("group insight not scheduled: the Pallas runtime did not start")
        return
    seconds = sweep_interval_seconds(app.insight)
    scheduler.add_job(
        _run,
        "interval",
        seconds=seconds,
        id=JOB_ID,
        max_instances=1,
        coalesce=True,
        replace_existing=True,
    )
    log.info("group insight sweep scheduled: every %ss", seconds)
