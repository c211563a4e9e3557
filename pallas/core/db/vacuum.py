"""`pallas vacuum`: give a database's free space back to the file system, once.

Retention deletes rows; where the freed space goes depends on the file:

- a SQLite file created by this version uses `auto_vacuum = INCREMENTAL`, and the retention
  job hands free pages back a few thousand at a time (`retention.reclaim`); nothing to do;
- an older SQLite file (`auto_vacuum = NONE`) keeps its free pages for reuse and never
  shrinks. `vacuum_sqlite` switches it to INCREMENTAL and rewrites it with `VACUUM` — the only
  way SQLite changes that mode. The rewrite needs the file to itself for its duration (about
  a second per 100 MB here) and as much free disk as the database: stop the bot first;
- PostgreSQL reclaims dead rows with its own autovacuum; `vacuum_postgres` runs a plain
  `VACUUM (ANALYZE)` (never `FULL`, which locks tables) for an operator who wants it now.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import create_async_engine

from pallas.core.errors import StorageError

AUTO_VACUUM_MODES = {0: "none", 1: "full", 2: "incremental"}


class VacuumError(StorageError):
    """The database could not be vacuumed; the message says why, for the operator."""


@dataclass(frozen=True, slots=True)
class VacuumReport:
    before_bytes: int
    after_bytes: int
    mode_before: str  # auto_vacuum mode: none / full / incremental ("" for PostgreSQL)
    mode_after: str
    seconds: float
    rewrote: bool  # False: the file was already incremental, only free pages were released

    def lines(self) -> list[str]:
        mib = 1_048_576
        saved = self.before_bytes - self.after_bytes
        head = "rewrote the file" if self.rewrote else "released free pages"
        return [
            f"{head} in {self.seconds:.2f} s: {self.before_bytes / mib:.1f} MiB → "
            f"{self.after_bytes / mib:.1f} MiB ({saved / mib:.1f} MiB given back)",
            f"auto_vacuum: {self.mode_before} → {self.mode_after}",
        ]


def _size(db: sqlite3.Connection) -> int:
    pages = int(db.execute("PRAGMA page_count").fetchone()[0])
    return pages * int(db.execute("PRAGMA page_size").fetchone()[0])


def vacuum_sqlite(path: Path, *, busy_timeout_s: float = 5.0) -> VacuumReport:
    """Switch `path` to incremental auto-vacuum (rewriting it if needed) and free its pages."""
    if not path.is_file():
        raise VacuumError(f"{path} does not exist")
    started = time.perf_counter()
    db = sqlite3.connect(path, timeout=busy_timeout_s, isolation_level=None)
    try:
        before = _size(db)
        mode = AUTO_VACUUM_MODES.get(int(db.execute("PRAGMA auto_vacuum").fetchone()[0]), "?")
        rewrote = mode != "incremental"
        if rewrote:
            db.execute("PRAGMA auto_vacuum=INCREMENTAL")
            db.execute("VACUUM")  # the mode takes effect only through a rewrite
        else:
            db.executescript("PRAGMA incremental_vacuum;")  # execute() would take one step
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        after_mode = AUTO_VACUUM_MODES.get(int(db.execute("PRAGMA auto_vacuum").fetchone()[0]))
        return VacuumReport(
            before_bytes=before,
            after_bytes=_size(db),
            mode_before=mode,
            mode_after=after_mode or "?",
            seconds=time.perf_counter() - started,
            rewrote=rewrote,
        )
    except sqlite3.OperationalError as exc:
        hint = " (is the bot still running? stop it first)" if "locked" in str(exc) else ""
        raise VacuumError(f"SQLite refused: {exc}{hint}") from exc
    finally:
        db.close()


async def vacuum_postgres(database_url: str) -> float:
    """`VACUUM (ANALYZE)` of the whole database; returns the seconds it took."""
    started = time.perf_counter()
    engine = create_async_engine(database_url, isolation_level="AUTOCOMMIT")
    try:
        async with engine.connect() as conn:
            await conn.execute(text("VACUUM (ANALYZE)"))
    except (SQLAlchemyError, OSError) as exc:
        raise VacuumError(f"PostgreSQL refused: {exc}") from exc
    finally:
        await engine.dispose()
    return time.perf_counter() - started
