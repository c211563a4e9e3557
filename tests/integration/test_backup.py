"""`pallas backup` / `restore` (issue 33): a consistent copy while the bot's writer is busy.

Messages go in through the bot's own message writer (its thread, its batches) at full speed
while the backup runs; the copy must hold every message committed before it started, be a
whole database (quick_check, the migration heads), and a restore must give the bot back a
database it starts on with those rows.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from pallas.cli.main import main as cli_main
from pallas.core.clock import FakeClock
from pallas.core.db.backup import (
    BackupError,
    BackupReport,
    backup_postgres,
    backup_sqlite,
    restore_postgres,
    restore_sqlite,
    sqlite_path,
)
from pallas.core.db.migrate import script_heads
from pallas.core.records import StoredMessage
from pallas.core.settings import PallasSettings
from pallas.core.state import MemoryStateStore
from pallas.runtime import PallasRuntime
from tests.harness import postgres as pg

BOT, GROUP = 10, 600
NOW = 1_760_000_000.0


def _message(mid: int) -> StoredMessage:
    return StoredMessage(BOT, GROUP, mid, 100 + mid % 7, NOW + mid * 0.001, f"第{mid}条")


async def _runtime(url: str, tmp_path: Path) -> PallasRuntime:
    clock = FakeClock(NOW)
    settings = PallasSettings(
        database_url=url, pallas_config_dir=tmp_path / "config", pallas_data_dir=tmp_path
    )
    return await PallasRuntime.start(settings, clock=clock, state=MemoryStateStore(clock))


async def _burst(runtime: PallasRuntime, first: int, stop: asyncio.Event) -> int:
    """Submit messages (batches of 50 every 2 ms) until `stop`; return the last id."""
    mid = first - 1
    while not stop.is_set():
        for _ in range(50):
            mid += 1
            runtime.writer.submit(_message(mid))
        await asyncio.sleep(0.002)
    return mid


async def _copy_under_burst(
    runtime: PallasRuntime, first: int, copy: Callable[..., object], *args: object
) -> int:
    """Start a write burst, take the copy (in a thread) while it runs, stop the burst."""
    stop = asyncio.Event()
    burst = asyncio.ensure_future(_burst(runtime, first, stop))
    await asyncio.sleep(0.05)  # the writer is busy committing batches
    try:
        await asyncio.to_thread(copy, *args)
    finally:
        stop.set()
    return await burst


def _ids(path: Path) -> set[int]:
    with contextlib.closing(sqlite3.connect(path)) as db:
        return {int(r[0]) for r in db.execute("SELECT message_id FROM message")}


async def test_sqlite_backup_under_a_write_burst_keeps_every_committed_row(
    tmp_path: Path,
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'live.db'}"
    runtime = await _runtime(url, tmp_path)
    try:
        for mid in range(1, 1_001):
            runtime.writer.submit(_message(mid))
        await runtime.writer.flush()  # committed before the backup starts
        reports: list[object] = []
        last = await _copy_under_burst(
            runtime, 1_001, lambda: reports.append(
                backup_sqlite(tmp_path / "live.db", tmp_path / "copy.db")
            )
        )  # fmt: skip
        report = reports[0]
        assert isinstance(report, BackupReport)
        await runtime.writer.flush()
    finally:
        await runtime.stop()
    saved = _ids(tmp_path / "copy.db")
    assert last > 1_100  # the writer was busy while the copy was taken
    assert set(range(1, 1_001)) <= saved  # every row committed before the backup
    assert saved <= set(range(1, last + 1))
    assert report.rows["message"] == len(saved)
    assert frozenset(report.heads) == script_heads()
    assert not (tmp_path / "copy.db.partial").exists()

    restored = restore_sqlite(tmp_path / "copy.db", tmp_path / "restored.db")
    assert restored.rows["message"] == len(saved)
    runtime = await _runtime(f"sqlite+aiosqlite:///{tmp_path / 'restored.db'}", tmp_path)
    try:  # the bot starts on the restored database (already at the heads) and reads it
        assert await runtime.repos.messages.count(group_id=GROUP) == len(saved)
    finally:
        await runtime.stop()


def test_backup_refuses_to_overwrite_and_checks_what_it_restores(tmp_path: Path) -> None:
    (tmp_path / "a.db").write_bytes(b"")
    sqlite3.connect(tmp_path / "a.db").close()
    (tmp_path / "exists.db").write_text("keep me", encoding="utf-8")
    with pytest.raises(BackupError, match="exists"):
        backup_sqlite(tmp_path / "a.db", tmp_path / "exists.db")
    assert (tmp_path / "exists.db").read_text(encoding="utf-8") == "keep me"
    (tmp_path / "garbage.db").write_text("not a database", encoding="utf-8")
    with pytest.raises(BackupError, match="not a readable SQLite database"):
        restore_sqlite(tmp_path / "garbage.db", tmp_path / "target.db")
    assert not (tmp_path / "target.db").exists()


def test_cli_backup_and_guarded_restore(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    live = tmp_path / "live.db"
    with contextlib.closing(sqlite3.connect(live)) as db:
        db.execute("CREATE TABLE message (message_id INTEGER)")
        db.execute("INSERT INTO message VALUES (7)")
        db.commit()
    monkeypatch.setenv("DATABASE_URL", f"sqlite+aiosqlite:///{live}")
    assert cli_main(["backup", str(tmp_path / "b.db")]) == 0
    assert "rows: message 1" in capsys.readouterr().out
    assert cli_main(["restore", str(tmp_path / "b.db")]) == 2  # without --yes: nothing done
    assert "stop the bot first" in capsys.readouterr().out
    assert cli_main(["restore", str(tmp_path / "b.db"), "--yes"]) == 0
    assert sqlite_path(f"sqlite+aiosqlite:///{live}") == live


@pytest.mark.skipif(pg.unavailable_reason() is not None, reason=str(pg.unavailable_reason()))
async def test_postgres_backup_under_a_write_burst_and_restore(
    tmp_path: Path, postgres_server: pg.PostgresServer, postgres_template: str
) -> None:
    url = postgres_server.create_database("backup_live", template=postgres_template)
    runtime = await _runtime(url, tmp_path)
    try:
        for mid in range(1, 501):
            runtime.writer.submit(_message(mid))
        await runtime.writer.flush()
        last = await _copy_under_burst(runtime, 501, backup_postgres, url, tmp_path / "pg.dump")
        assert last > 600
    finally:
        await runtime.stop()
    target = postgres_server.create_database("backup_restored")
    restore_postgres(tmp_path / "pg.dump", target)
    runtime = await _runtime(target, tmp_path)
    try:
        stored = await runtime.repos.messages.count(group_id=GROUP)
        assert stored >= 500  # every row committed before the dump, and the dump is whole
    finally:
        await runtime.stop()
