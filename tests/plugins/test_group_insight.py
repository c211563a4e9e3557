"""packages/group_insight: the sweep is scheduled at start-up, at the configured interval."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

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


@pytest.fixture
def restore_interval() -> Iterator[None]:
    yield
    _scheduler().reschedule_job(JOB_ID, trigger="interval", seconds=STARTUP_SWEEP_INTERVAL)


def test_sweep_is_scheduled_at_start_up_with_the_configured_interval() -> None:
    # start-up config: [learning] sweep_interval_seconds = 1800 (the built-in default is 1200)
    assert _scheduler().running
    job = _job()
    assert job.trigger.interval.total_seconds() == STARTUP_SWEEP_INTERVAL
    assert job.max_instances == 1 and job.coalesce


async def test_a_run_picks_up_a_changed_interval(pallas: Pallas, restore_interval: None) -> None:
    await pallas.start(learning={"sweep_interval_seconds": 600})
    await _job().func()  # what the scheduler runs: one sweep, then the interval check
    assert _job().trigger.interval.total_seconds() == 600
