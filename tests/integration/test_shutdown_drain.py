"""Background memory work pending at shutdown is finished or named as dropped (issue 46).

Before: `PallasApp.stop` drained the chat's after-turn work but not the memory service's own
background jobs (expansion, consolidation, embedding backfill, touch flushes), so a job
queued by the last turn was lost silently when the runtime closed under it. Now the app's
parts stop in reverse order and the memory's part waits up to `SHUTDOWN_DRAIN_S`: each kind
is finished, or named as dropped and counted by kind in one warning.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import shutil
from pathlib import Path
from typing import Any

import pytest

from pallas.app import start_app
from pallas.app_model import PallasApp
from pallas.core.background import BackgroundJobs
from pallas.core.clock import FakeClock
from pallas.core.db.engine import create_engine, session_factory
from pallas.core.settings import PallasSettings
from pallas.core.state import MemoryStateStore
from pallas.features.memory import MemoryRepository, ProfileRepository, own_scope
from pallas.features.memory_upkeep.consolidation import CONSOLIDATE_SYSTEM
from tests.harness.fake_openai import FakeOpenAI, Scripted
from tests.integration.chat_app import BOT, GROUP, REPO, write_group_defaults

# The three kinds of the memory's own background work one taught fact starts: expansion
# (cheap model), consolidation of the member's profile (cheap model) and the embedding backfill.
KINDS = ("backfill", "consolidation", "expansion")
USER = 31001
GROUP_TOML = (
    "[memory.profile]\nconsolidate_delay_s = 0\nconsolidate_min_facts = 1\n"
    "[memory.expansion]\nenabled = true\n"
)


def _cheap_answer(body: dict[str, Any]) -> str:
    if body["messages"][0]["content"] == CONSOLIDATE_SYSTEM:
        return json.dumps({"statements": [{"text": "TA养了一只猫", "refs": ["f1"]}]})
    return json.dumps({"keywords": ["猫", "宠物"], "category": "pet", "questions": ["养猫吗"]})


async def _app_with_upkeep(root: Path, fake: FakeOpenAI) -> PallasApp:
    """The app as `bot.py` builds it, with the memory's upkeep on: embeddings (the model's
    endpoint serves them), expansion, and consolidation as soon as a fact changes."""
    shutil.copytree(REPO / "config", root / "config")
    write_group_defaults(root / "config")
    (root / "config" / "groups" / f"{GROUP}.toml").write_text(GROUP_TOML, encoding="utf-8")
    clock = FakeClock()
    return await start_app(
        PallasSettings(
            database_url=f"sqlite+aiosqlite:///{root / 'pallas.db'}",
            pallas_config_dir=root / "config",
            pallas_data_dir=root,
            openai_base_url=fake.base_url,
            openai_api_key="sk-test",
            pallas_embedding_model="fake-embed",
            pallas_llm_timeout_seconds=5.0,
            pallas_llm_max_retries=0,
        ),
        clock=clock,
        state=MemoryStateStore(clock),
        rng=random.Random(7),
        llm_http_client=fake.http_client(),
    )


async def _teach(app: PallasApp) -> int:
    outcome = await app.memory.remember(
        bot_id=BOT, scope=own_scope(BOT, GROUP, USER), kind="person_facts", text="我养了一只猫",
        origin="teach", subject_user_id=USER, author_user_id=USER,
    )  # fmt: skip
    return outcome.item.id


async def test_upkeep_pending_when_the_app_stops_is_finished_before_the_database_closes(
    tmp_path: Path, fake_llm: FakeOpenAI, caplog: pytest.LogCaptureFixture
) -> None:
    app = await _app_with_upkeep(tmp_path, fake_llm)
    fake_llm.embeddings_delay = 0.3  # each kind still in flight when SIGTERM arrives
    fake_llm.enqueue(*(Scripted(respond=_cheap_answer, delay=0.3) for _ in range(2)))
    item_id = await _teach(app)
    await app.stop()  # as on SIGTERM: the edge's shutdown stops the app
    assert "dropped" not in caplog.text
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'pallas.db'}")
    sessions = session_factory(engine)
    try:
        item = await MemoryRepository(sessions).get(item_id)
        profile = await ProfileRepository(sessions).get(item.scope, USER) if item else None
    finally:
        await engine.dispose()  # its connection's thread never outlives the test
    assert item is not None
    assert item.embedding_model == "api:fake-embed"  # backfill
    assert item.source.get("expansion", {}).get("keywords") == ["猫", "宠物"]  # expansion
    assert profile is not None  # consolidation
    assert [s.text for s in profile.statements] == ["TA养了一只猫"]


async def test_upkeep_past_the_deadline_is_logged_as_dropped_by_kind(
    tmp_path: Path,
    fake_llm: FakeOpenAI,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("pallas.app.SHUTDOWN_DRAIN_S", 0.2)
    app = await _app_with_upkeep(tmp_path, fake_llm)
    fake_llm.embeddings_delay = 2.0
    fake_llm.enqueue(*(Scripted(respond=_cheap_answer, delay=2.0) for _ in range(2)))
    item_id = await _teach(app)
    await app.stop()
    [warning] = [r.getMessage() for r in caplog.records if "at shutdown" in r.getMessage()]
    assert f"expansion of item {item_id}" in warning
    assert f"consolidation of item {item_id}" in warning
    assert "(by kind: backfill 1, consolidation 1, expansion 1)" in warning


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
        "item 7 (by kind: expansion of item 7 1)" in caplog.text
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
