"""Consistent copies of a live database, and putting one back (`pallas backup` / `restore`).

- **SQLite**: SQLite's online backup API from a read-only connection, in one step: the copy is
  one read transaction's snapshot (in WAL mode the bot keeps writing meanwhile; a stepwise
  copy would restart on every commit of a busy bot and might never finish). The copy is then
  checked (`PRAGMA quick_check`) and its migration heads and row counts read back.
- **PostgreSQL**: `pg_dump --format=custom --no-owner --no-privileges` (a consistent snapshot
  by design) and `pg_restore --clean --if-exists --no-owner --no-privileges`; the binaries must
  match the server's major version.

Restoring replaces the target database: stop the bot first (its caches would describe the old
data); a SQLite restore goes through the backup API too, so a process that still has the file
open sees a whole database, never half of one.
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy.engine import make_url

from pallas.core.errors import StorageError

COUNTED_TABLES = ("message", "chat_session_turn", "memory_item", "usage_ledger")


class BackupError(StorageError):
    """The copy could not be made or checked; the message says why, for the operator."""


@dataclass(frozen=True, slots=True)
class BackupReport:
    path: Path
    bytes: int
    seconds: float
    heads: tuple[str, ...] = ()  # alembic revisions of the copy
    rows: dict[str, int] = field(default_factory=dict)  # COUNTED_TABLES present in the copy

    def lines(self) -> list[str]:
        counts = ", ".join(f"{t} {n}" for t, n in self.rows.items()) or "no tables counted"
        return [
            f"copy at {self.path}: {self.bytes / 1_048_576:.1f} MiB in {self.seconds:.2f} s",
            f"schema heads: {', '.join(self.heads) or 'none (not a Pallas database?)'}",
            f"rows: {counts}",
        ]


def sqlite_path(database_url: str) -> Path | None:
    """The file of a SQLite URL, None for any other backend (or an in-memory database)."""
    url = make_url(database_url)
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:":
        return None
    return Path(url.database)


def libpq_url(database_url: str) -> str:
    """`postgresql+asyncpg://…` as pg_dump / pg_restore take it (`postgresql://…`)."""
    url = make_url(database_url).set(drivername="postgresql")
    return url.render_as_string(hide_password=False)


def _describe(path: Path) -> tuple[tuple[str, ...], dict[str, int]]:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        if db.execute("PRAGMA quick_check").fetchone() != ("ok",):
            raise BackupError(f"{path} fails SQLite's quick_check")
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        heads: tuple[str, ...] = ()
        if "alembic_version" in tables:
            heads = tuple(
                sorted(r[0] for r in db.execute("SELECT version_num FROM alembic_version"))
            )
        rows = {
            t: int(db.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0])
            for t in COUNTED_TABLES
            if t in tables
        }
    except sqlite3.DatabaseError as exc:
        raise BackupError(f"{path} is not a readable SQLite database: {exc}") from exc
    finally:
        db.close()
    return heads, rows


def _copy(source: sqlite3.Connection, target_path: Path) -> None:
    target = sqlite3.connect(target_path)
    try:
        source.backup(target)  # pages=-1: one step, one snapshot
    finally:
        target.close()


def backup_sqlite(
    source_path: Path, target_path: Path, *, busy_timeout_s: float = 30
) -> BackupReport:
    if not source_path.is_file():
        raise BackupError(f"no database at {source_path}")
    if target_path.exists():
        raise BackupError(f"{target_path} exists: give a new file name")
    target_path.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    partial = target_path.with_name(target_path.name + ".partial")
    partial.unlink(missing_ok=True)
    try:
        source = sqlite3.connect(f"file:{source_path}?mode=ro", uri=True, timeout=busy_timeout_s)
        try:
            _copy(source, partial)
        finally:
            source.close()
        heads, rows = _describe(partial)
        partial.rename(target_path)  # only a checked copy gets the name asked for
    except sqlite3.Error as exc:
        partial.unlink(missing_ok=True)
        raise BackupError(f"backup of {source_path} failed: {exc}") from exc
    except BackupError:
        partial.unlink(missing_ok=True)
        raise
    seconds = time.perf_counter() - started
    return BackupReport(target_path, target_path.stat().st_size, seconds, heads, rows)


def restore_sqlite(backup_path: Path, target_path: Path) -> BackupReport:
    """Replace the database at `target_path` with a checked backup."""
    if not backup_path.is_file():
        raise BackupError(f"no backup at {backup_path}")
    started = time.perf_counter()
    heads, rows = _describe(backup_path)
    target_path.parent.mkdir(parents=True, exist_ok=True)
    try:
        source = sqlite3.connect(f"file:{backup_path}?mode=ro", uri=True)
        try:
            _copy(source, target_path)
        finally:
            source.close()
    except sqlite3.Error as exc:
        raise BackupError(f"restore into {target_path} failed: {exc}") from exc
    seconds = time.perf_counter() - started
    return BackupReport(target_path, target_path.stat().st_size, seconds, heads, rows)


def _run(command: list[str]) -> None:
    if shutil.which(command[0]) is None:
        raise BackupError(f"{command[0]} is not installed (the PostgreSQL client tools)")
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise BackupError(f"{command[0]} failed: {done.stderr.strip()[-500:]}")


def backup_postgres(database_url: str, target_path: Path) -> BackupReport:
    if target_path.exists():
        raise BackupError(f"{target_path} exists: give a new file name")
    started = time.perf_counter()
    _run(["pg_dump", "--format=custom", "--no-owner", "--no-privileges",
          f"--file={target_path}", libpq_url(database_url)])  # fmt: skip
    return BackupReport(target_path, target_path.stat().st_size, time.perf_counter() - started)


def restore_postgres(backup_path: Path, database_url: str) -> BackupReport:
    if not backup_path.is_file():
        raise BackupError(f"no backup at {backup_path}")
    started = time.perf_counter()
    _run(["pg_restore", "--clean", "--if-exists", "--no-owner", "--no-privileges",
          "--single-transaction", f"--dbname={libpq_url(database_url)}",
          str(backup_path)])  # fmt: skip
    return BackupReport(backup_path, backup_path.stat().st_size, time.perf_counter() - started)
