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


# Page cache per SQLite connection, in KiB (SQLite's default is 2,000). The pool opens up to 15
# connections in a burst and each fills its cache (~31 MB measured on a 1M-message database);
# the OS page cache still holds the file, so a smaller cache costs little.
SQLITE_CACHE_KIB = 1024


def _enable_sqlite_pragmas(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=5000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute(f"PRAGMA cache_size=-{SQLITE_CACHE_KIB}")
    cursor.close()


def create_engine(url: str) -> AsyncEngine:
    engine = create_async_engine(url, pool_pre_ping=not url.startswith("sqlite"))
    if engine.dialect.name == "sqlite":
        event.listen(engine.sync_engine, "connect", _enable_sqlite_pragmas)
    return engine


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
