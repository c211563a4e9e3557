"""The SQLite pool keeps `SQLITE_POOL_SIZE` connections and opens no overflow: a read beyond
them waits on the event loop for a free one (each aiosqlite connection is a thread; a burst
used to open and close dozens of overflow connections a second)."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import pytest
from sqlalchemy import text

from pallas.core.db.engine import SQLITE_POOL_SIZE, create_engine


async def test_a_read_past_the_pool_waits_for_a_free_connection(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'pool.db'}")
    try:
        async with contextlib.AsyncExitStack() as held:
            connections = [
                await held.enter_async_context(engine.connect()) for _ in range(SQLITE_POOL_SIZE)
            ]
            for connection in connections:
                assert (await connection.execute(text("select 1"))).scalar() == 1
            extra = asyncio.ensure_future(_select_one(engine))
            await asyncio.sleep(0.2)
            assert not extra.done(), "no connection past the pool"
        assert await asyncio.wait_for(extra, 5) == 1  # one came back: the read goes on
    finally:
        await engine.dispose()


@pytest.mark.parametrize("url", ["sqlite+aiosqlite:///:memory:", "sqlite+aiosqlite://"])
async def test_an_in_memory_database_keeps_its_one_connection(url: str) -> None:
    engine = create_engine(url)
    try:
        async with engine.connect() as first, engine.connect() as second:
            await first.execute(text("create table t (x int)"))
            await first.execute(text("insert into t values (7)"))
            assert (await second.execute(text("select x from t"))).scalar() == 7
    finally:
        await engine.dispose()


async def _select_one(engine) -> int:  # type: ignore[no-untyped-def]
    async with engine.connect() as connection:
        return int((await connection.execute(text("select 1"))).scalar_one())
