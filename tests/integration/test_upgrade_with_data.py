"""Upgrades with data (issue 33): a database filled under the previous release's schema heads
migrates to the current heads with every row intact, and the bot serves it; a database
migrated by a newer release is refused with a clear message and left as it was.

The previous release is built with the project's own migrations: every branch head that
existed before `0012_provider_usage` (which rebuilds the usage ledger's unique key, a table
copy on SQLite).
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

from pallas.core.clock import FakeClock
from pallas.core.db import migrate
from pallas.core.db.engine import create_engine
from pallas.core.db.repositories.usage import UsageEntry
from pallas.core.settings import PallasSettings
from pallas.core.state import MemoryStateStore
from pallas.runtime import PallasRuntime
from tests.harness import postgres as pg

PREVIOUS_HEADS = ("0003_memory", "0004_learning", "0005_session", "0006_stickers",
                  "0007_pipeline_state", "0011_console")  # fmt: skip
BOT, GROUP = 10, 700
NOW = 1_760_000_000.0
MESSAGES = 2_000


@pytest.fixture(params=["sqlite", "postgres"])
def empty_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'old.db'}"
        return
    if pg.unavailable_reason() is not None:
        pytest.skip(str(pg.unavailable_reason()))
    server: pg.PostgresServer = request.getfixturevalue("postgres_server")
    yield server.create_database(f"upgrade_{tmp_path.name[-8:].lower().replace('-', '_')}")


async def _fill_previous_release(url: str) -> None:
    for head in PREVIOUS_HEADS:
        await migrate.upgrade(url, head)
    engine = create_engine(url)
    segments = json.dumps([{"type": "text", "data": {"text": "x"}}])
    try:
        async with engine.begin() as db:
            await db.execute(
                text(
                    "INSERT INTO message (self_id, group_id, message_id, user_id, card, nickname,"
                    " role, raw_message, segments, plain_text, reply_to, is_bot, time)"
                    " VALUES (:bot, :group, :mid, :user, '阿米娅', 'nick', 'member', :raw,"
                    " :segments, :raw, NULL, false, :time)"
                ),
                [
                    {"bot": BOT, "group": GROUP, "mid": i, "user": 100 + i % 9,
                     "raw": f"第{i}条消息", "segments": segments, "time": NOW + i}
                    for i in range(1, MESSAGES + 1)
                ],
            )  # fmt: skip
            await db.execute(
                text(
                    "INSERT INTO usage_ledger (day, bot_id, group_id, task, model, calls,"
                    " failures, prompt_tokens, completion_tokens)"
                    " VALUES (:day, :bot, :group, :task, 'gpt-4o-mini', :calls, 0, :p, :c)"
                ),
                [
                    {"day": f"2025-10-{d:02d}", "bot": BOT, "group": GROUP, "task": task,
                     "calls": d, "p": 1000 * d, "c": 100 * d}
                    for d in range(1, 29) for task in ("chat", "cheap")
                ],
            )  # fmt: skip
    finally:
        await engine.dispose()


async def test_the_previous_release_database_migrates_with_every_row(
    empty_url: str, tmp_path: Path
) -> None:
    await _fill_previous_release(empty_url)
    clock = FakeClock(NOW + 10_000)
    settings = PallasSettings(
        database_url=empty_url, pallas_config_dir=tmp_path / "config", pallas_data_dir=tmp_path
    )
    runtime = await PallasRuntime.start(settings, clock=clock, state=MemoryStateStore(clock))
    try:  # start-up migrated it to the heads; the bot reads and writes it as its own
        assert await runtime.repos.messages.count(group_id=GROUP) == MESSAGES
        rows = await runtime.repos.messages.find_by_message_ids(BOT, GROUP, [1, MESSAGES])
        assert rows[MESSAGES].text == f"第{MESSAGES}条消息" and rows[1].card == "阿米娅"
        async with runtime.sessions() as session:
            old = (
                await session.execute(
                    text("SELECT count(*), sum(calls), sum(prompt_tokens), sum(cached_tokens),"
                         " min(endpoint) FROM usage_ledger")
                )
            ).one()  # fmt: skip
        assert tuple(old) == (56, 2 * sum(range(1, 29)), 2 * 1000 * sum(range(1, 29)), 0, "")
        # the new key: the same day × group × task × model from another endpoint is a new row
        await runtime.repos.usage.record(
            UsageEntry(now=NOW, bot_id=BOT, group_id=GROUP, task="chat", model="gpt-4o-mini",
                       prompt_tokens=10, completion_tokens=1, cached_tokens=8, endpoint="backup")
        )  # fmt: skip
        totals = await runtime.repos.usage.totals(now=NOW, group_id=GROUP, task="chat")
        assert totals.cached_tokens == 8
    finally:
        await runtime.stop()
    if empty_url.startswith("sqlite"):
        assert migrate.at_heads(empty_url)


def _dump(path: Path) -> list[str]:
    with contextlib.closing(sqlite3.connect(path)) as db:
        return list(db.iterdump())


async def test_a_database_from_a_newer_release_is_refused_and_left_alone(
    tmp_path: Path,
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'newer.db'}"
    await migrate.upgrade(url)
    engine = create_engine(url)
    try:
        async with engine.begin() as db:
            await db.execute(text("INSERT INTO alembic_version VALUES ('0099_from_the_future')"))
    finally:
        await engine.dispose()
    before = _dump(tmp_path / "newer.db")
    clock = FakeClock(NOW)
    settings = PallasSettings(
        database_url=url, pallas_config_dir=tmp_path / "config", pallas_data_dir=tmp_path
    )
    with pytest.raises(migrate.UnknownRevisionError, match="migrated by a newer release"):
        await PallasRuntime.start(settings, clock=clock, state=MemoryStateStore(clock))
    assert _dump(tmp_path / "newer.db") == before  # schema and rows as they were
