"""Async engine / session factory. SQLite runs in WAL mode; PostgreSQL is used by URL."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Result, make_url
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

from pallas.core.db.sqlite_one_hop import one_hop_module

log = logging.getLogger("pallas.db")


def normalise_database_url(url: str, *, base_dir: Path | None = None) -> str:
    """Make relative SQLite paths absolute (against `base_dir`) and create their folder."""
    parsed = make_url(url)
    if (
        parsed.get_backend_name() != "sqlite"
        or not parsed.database
        or parsed.database == ":memory:"
    ):
        return url
    path = Path(parsed.database)
    if not path.is_absolute():
        path = (base_dir or Path.cwd()) / path
    path.parent.mkdir(parents=True, exist_ok=True)
    return parsed.set(database=str(path)).render_as_string(hide_password=False)


# Page cache per SQLite connection, in KiB (SQLite's default is 2,000). Each pooled connection
# fills its cache (~31 MB measured for 15 of them on a 1M-message database); the OS page cache
# still holds the file, so a smaller cache costs little.
SQLITE_CACHE_KIB = 1024
# SQLite file connections the pool keeps, and no overflow beyond them. Each aiosqlite
# connection is a thread, and every statement a hop between it and the event loop; a
# burst of cold reads (a restart into a busy evening: each group's first @ loads ~12 entries at
# once) used to open overflow connections past the default 5 — a thread, a connect and five
# PRAGMAs each, closed again on return, ~50 of them a second — and the extra threads fought the
# loop for the GIL. Now a read beyond 8 waits on the loop for a free connection: the 20 @s of
# `benchmarks.ingest --cold` reached the model 1.7-2.0 → 1.3-1.4 s (p99) after being sent.
SQLITE_POOL_SIZE = 8


def _enable_sqlite_pragmas(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
    cursor = dbapi_connection.cursor()
    # a new database file frees the pages of pruned rows on request (`retention.reclaim`);
    # on an existing file (tables already there) SQLite ignores it
    cursor.execute("PRAGMA auto_vacuum=INCREMENTAL")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=5000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute(f"PRAGMA cache_size=-{SQLITE_CACHE_KIB}")
    cursor.close()


def create_engine(url: str) -> AsyncEngine:
    engine = create_async_engine(
        url, pool_pre_ping=not url.startswith("sqlite"), **_sqlite_args(url)
    )
    if engine.dialect.name == "sqlite":
        event.listen(engine.sync_engine, "connect", _enable_sqlite_pragmas)
    return engine


def _sqlite_args(url: str) -> dict[str, Any]:
    """SQLite: statements in one hop to the connection's thread (`sqlite_one_hop`) and, for a
    file, a fixed pool (an in-memory database has its one static connection). PostgreSQL keeps
    SQLAlchemy's defaults."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return {}
    module = one_hop_module() if parsed.get_driver_name() == "aiosqlite" else None
    args: dict[str, Any] = {} if module is None else {"module": module}
    database = parsed.database or ""
    if database in ("", ":memory:") or parsed.query.get("mode") == "memory":
        return args
    return {**args, "pool_size": SQLITE_POOL_SIZE, "max_overflow": 0}


def session_factory(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return async_sessionmaker(engine, expire_on_commit=False)


def rowcount(result: Result[Any]) -> int:
    """Rows a DML statement touched, as the driver reports it (0 when it does not)."""
    return int(getattr(result, "rowcount", 0) or 0)


def dialect_name(session: AsyncSession) -> str:
    """`"sqlite"` or `"postgresql"`: the dialect of the engine a session is bound to."""
    if session.bind is None:
        raise RuntimeError("database session is not bound to an engine")
    return session.bind.dialect.name
