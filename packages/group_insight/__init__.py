"""Group insight sweep on a schedule: learn each group's pairs, labels, strategies and rhythm.

Thin: schedules `pallas.features.learning.group_insight_processor.scheduled_sweep` with
apscheduler every `[learning] sweep_interval_seconds` (config/groups/default.toml; a changed
value is picked up after the next run), once the app is up. `/pallas learn now` runs the same
sweep on demand.
"""

from __future__ import annotations

import logging

from nonebot import require
from nonebot.plugin import PluginMetadata

require("nonebot_plugin_apscheduler")
from nonebot_plugin_apscheduler import scheduler  # noqa: E402

from pallas.app_model import PallasApp  # noqa: E402
from pallas.features.learning import scheduled_sweep, sweep_interval_seconds  # noqa: E402
from pallas.onebot.plugin_parts import PALLAS, PallasPlugin  # noqa: E402

log = logging.getLogger("pallas.learning")

JOB_ID = "pallas_group_insight"


async def schedule(app: PallasApp) -> None:
    async def run() -> None:
        await scheduled_sweep(app.insight)
        job = scheduler.get_job(JOB_ID)
        seconds = sweep_interval_seconds(app.insight)
        interval = getattr(getattr(job, "trigger", None), "interval", None)
        if job is not None and interval is not None and interval.total_seconds() != seconds:
            scheduler.reschedule_job(JOB_ID, trigger="interval", seconds=seconds)
            log.info("group insight sweep rescheduled: every %ss", seconds)

    seconds = sweep_interval_seconds(app.insight)
    scheduler.add_job(
        run,
        "interval",
        seconds=seconds,
        id=JOB_ID,
        max_instances=1,
        coalesce=True,
        replace_existing=True,
    )
    log.info("group insight sweep scheduled: every %ss", seconds)


async def unschedule(app: PallasApp) -> None:
    if scheduler.get_job(JOB_ID) is not None:
        scheduler.remove_job(JOB_ID)


__plugin_meta__ = PluginMetadata(
    name="group_insight",
    description="Background learning of each group's expression, rhythm and reply strategies",
    usage="automatic; /pallas learn now|status",
    extra={PALLAS: PallasPlugin(on_ready=(schedule,), on_shutdown=(unschedule,))},
)
