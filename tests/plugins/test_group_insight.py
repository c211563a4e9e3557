"""packages/group_insight: the sweep is scheduled at start-up, at the configured interval."""

from __future__ import annotations

from typing import Any

from tests.plugins.conftest import STARTUP_SWEEP_INTERVAL, Pallas

JOB_ID = "pallas_group_insight"


def _scheduler() -> Any:
    # imported once the plugins are loaded (the module needs an initialised NoneBot)
    from nonebot_plugin_apscheduler import scheduler

    return scheduler


def _job() -> Any:
    job = _scheduler().get_job(JOB_ID)
    assert job is not None, f"no scheduled job {JOB_ID!r}"
    return job


async def test_sweep_is_scheduled_at_start_up_with_the_configured_interval(
    pallas: Pallas,
) -> None:
    # start-up config: [learning] sweep_interval_seconds = 1800 (the built-in default is 1200)
    await pallas.start(learning={"sweep_interval_seconds": STARTUP_SWEEP_INTERVAL})
    assert _scheduler().running
    job = _job()
    assert job.trigger.interval.total_seconds() == STARTUP_SWEEP_INTERVAL
    assert job.max_instances == 1 and job.coalesce


async def test_a_run_picks_up_a_changed_interval(pallas: Pallas) -> None:
    await pallas.start(learning={"sweep_interval_seconds": 600})
    await _job().func()  # what the scheduler runs: one sweep, then the interval check
    assert _job().trigger.interval.total_seconds() == 600


async def test_the_sweep_stops_with_the_app(pallas: Pallas) -> None:
    await pallas.start()
    assert _scheduler().get_job(JOB_ID) is not None
    await pallas.stop()
    assert _scheduler().get_job(JOB_ID) is None  # no job left running on a stopped app
