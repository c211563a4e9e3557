"""Background memory work pending at shutdown is finished or named as dropped (issue 46).

Before: `PallasApp.stop` drained the chat's after-turn work but not the memory service's own
background jobs (expansion, consolidation, embedding backfill, touch flushes), so a job
queued by the last turn was lost silently when the runtime closed under it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from pallas.core.background import BackgroundJobs
from pallas.core.clock import FakeClock
from pallas.features.memory import MemoryItem, MemoryService
from tests.harness.fake_openai import FakeOpenAI
from tests.integration.chat_app import BOT, GROUP, start_chat_app


@pytest.fixture
async def fake_llm() -> AsyncIterator[FakeOpenAI]:
    server = FakeOpenAI(in_process=True)
    await server.start()
    yield server
    await server.stop()


async def test_a_memory_job_queued_by_the_last_turn_finishes_before_the_app_stops(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    app, _ = await start_chat_app(tmp_path, fake_llm, FakeClock(), api_key=False)
    finished: list[int] = []

    async def slow_upkeep(service: MemoryService, item: MemoryItem) -> None:
        await asyncio.sleep(0.3)  # an expansion call on the cheap model, say
        finished.append(item.id)

    app.memory.write_listeners.append(slow_upkeep)
    outcome = await app.memory.remember(
        bot_id=BOT,
        scope=f"group:{BOT}:{GROUP}",
        kind="group_memory",
        text="群里周五开黑",
        origin="test",
    )
    await app.stop()  # SIGTERM arrives right after the turn
    assert finished == [outcome.item.id]


async def test_a_job_past_the_deadline_is_named_in_one_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    jobs = BackgroundJobs("memory", logging.getLogger("pallas.memory"))
    done: list[str] = []

    async def quick() -> None:
        await asyncio.sleep(0.01)
        jobs.spawn(later(), "started by a job")  # work a job starts meanwhile is waited for
        done.append("quick")

    async def later() -> None:
        await asyncio.sleep(0.01)
        done.append("later")

    jobs.spawn(quick(), "quick")
    jobs.spawn(asyncio.sleep(3600), "expansion of item 7")
    dropped = await jobs.drain(within_s=0.2)
    assert done == ["quick", "later"]
    assert dropped == ["expansion of item 7"]
    assert len(jobs) == 0
    assert (
        "1 background job(s) not finished within 0.2 s at shutdown, dropped: expansion of "
        "item 7" in caplog.text
    )


async def test_a_failing_job_is_logged_and_does_not_stop_the_drain(
    caplog: pytest.LogCaptureFixture,
) -> None:
    jobs = BackgroundJobs("memory", logging.getLogger("pallas.memory"))

    async def broken() -> None:
        raise RuntimeError("the cheap model said no")

    jobs.spawn(broken(), "consolidation of member 31001")
    assert await jobs.drain(within_s=1.0) == []
    assert "background job consolidation of member 31001 failed" in caplog.text
