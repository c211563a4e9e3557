"""`pallas vacuum` (issue 33): a database file made before incremental auto-vacuum shrinks once
its old rows are pruned, and keeps every row that was not."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from pallas.cli.main import main as cli_main
from pallas.core.db.vacuum import VacuumError, vacuum_postgres, vacuum_sqlite
from tests.harness import postgres as pg

ROWS = 4_000


def _old_style_database(path: Path, *, mode: str) -> None:
    """A file the way earlier versions made it (`mode` none), filled and then mostly pruned."""
    db = sqlite3.connect(path, isolation_level=None)
    db.execute(f"PRAGMA auto_vacuum={mode}")
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("CREATE TABLE message (id INTEGER PRIMARY KEY, text TEXT)")
    db.executemany(
        "INSERT INTO message (text) VALUES (?)", [("群聊消息" * 40,) for _ in range(ROWS)]
    )
    db.execute("DELETE FROM message WHERE id > 100")  # what retention does
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()


def _facts(path: Path) -> tuple[int, int, int]:
    db = sqlite3.connect(path)
    try:
        mode = int(db.execute("PRAGMA auto_vacuum").fetchone()[0])
        rows = int(db.execute("SELECT count(*) FROM message").fetchone()[0])
        return mode, rows, path.stat().st_size
    finally:
        db.close()


@pytest.mark.parametrize("mode", ["NONE", "INCREMENTAL"])
def test_vacuum_gives_pruned_space_back_and_keeps_the_rest(tmp_path: Path, mode: str) -> None:
    path = tmp_path / "pallas.db"
    _old_style_database(path, mode=mode)
    _, _, size_before = _facts(path)

    report = vacuum_sqlite(path)

    new_mode, rows, size_after = _facts(path)
    assert new_mode == 2  # incremental from now on: the retention job's reclaim works
    assert rows == 100
    assert size_after < size_before / 5
    assert report.rewrote == (mode == "NONE")
    assert report.mode_before == mode.lower()
    assert report.after_bytes < report.before_bytes


def test_vacuum_of_a_missing_or_locked_file_says_why(tmp_path: Path) -> None:
    with pytest.raises(VacuumError, match="does not exist"):
        vacuum_sqlite(tmp_path / "none.db")
    path = tmp_path / "busy.db"
    _old_style_database(path, mode="NONE")
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # a running bot mid-write
    try:
        with pytest.raises(VacuumError, match="stop it first"):
            vacuum_sqlite(path, busy_timeout_s=0.1)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert _facts(path)[1] == 100  # nothing lost by the refused attempt


def test_cli_vacuum(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "pallas.db"
    _old_style_database(path, mode="NONE")
    monkeypatch.setenv("DATABASE_URL", f"sqlite+aiosqlite:///{path}")
    assert cli_main(["vacuum"]) == 0
    out = capsys.readouterr().out
    assert "rewrote the file" in out and "none → incremental" in out
    assert cli_main(["vacuum"]) == 0  # the second time there is nothing to rewrite
    assert "released free pages" in capsys.readouterr().out


@pytest.mark.skipif(pg.unavailable_reason() is not None, reason=str(pg.unavailable_reason()))
async def test_postgres_vacuum_runs(postgres_server: pg.PostgresServer) -> None:
    url = postgres_server.create_database("vacuum_live")
    assert await vacuum_postgres(url) >= 0.0
    with pytest.raises(VacuumError, match="PostgreSQL refused"):
        await vacuum_postgres(url.rsplit("/", 1)[0] + "/no_such_database")
