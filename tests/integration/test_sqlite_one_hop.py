"""SQLite statements in one hop to the connection's thread (`pallas.core.db.sqlite_one_hop`):
the same results, errors and transactions as the stock aiosqlite adapter, one round trip per
statement, and no ROLLBACK round trip when nothing is open."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import aiosqlite.core
import pytest
from sqlalchemy import exc, text
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from pallas.core.db import sqlite_one_hop
from pallas.core.db.engine import create_engine, session_factory


@pytest.fixture
async def engine(tmp_path: Path) -> AsyncIterator[AsyncEngine]:
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'hop.db'}")
    async with engine.begin() as connection:
        await connection.execute(
            text("create table t (id integer primary key, name text unique, score real)")
        )
    yield engine
    await engine.dispose()


@pytest.fixture
def round_trips(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every call the event loop hands to an aiosqlite connection thread."""
    calls: list[str] = []
    original = aiosqlite.core.Connection._execute

    async def counted(self, fn, *args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(getattr(fn, "__name__", "?"))
        return await original(self, fn, *args, **kwargs)

    monkeypatch.setattr(aiosqlite.core.Connection, "_execute", counted)
    return calls


async def test_the_engine_uses_it(engine: AsyncEngine) -> None:
    assert isinstance(engine.dialect.dbapi, sqlite_one_hop.OneHopModule)


async def test_results_match_the_stock_adapter(engine: AsyncEngine, tmp_path: Path) -> None:
    rows = [{"name": f"群友{i}", "score": i / 3} for i in range(50)]
    sessions = session_factory(engine)
    async with sessions() as session:
        await session.execute(text("insert into t (name, score) values (:name, :score)"), rows)
        inserted = await session.execute(text("insert into t (name, score) values ('新人', null)"))
        assert inserted.lastrowid == 51 and inserted.rowcount == 1
        await session.commit()
    stock = create_async_engine(f"sqlite+aiosqlite:///{tmp_path / 'hop.db'}")
    query = text("select id, name, score from t where id > :low order by id desc")
    try:
        async with engine.connect() as mine, stock.connect() as theirs:
            for low in (0, 25, 60):
                ours = (await mine.execute(query, {"low": low})).all()
                assert ours == (await theirs.execute(query, {"low": low})).all()
            many = await mine.execute(query, {"low": 0})
            assert [r.id for r in many.fetchmany(3)] == [51, 50, 49]
            assert len(many.fetchall()) == 48
            updated = await mine.execute(text("update t set score = 0 where id <= 10"))
            assert updated.rowcount == 10
            await mine.rollback()
    finally:
        await stock.dispose()


async def test_a_select_is_one_round_trip_and_returning_it_none(
    engine: AsyncEngine, round_trips: list[str]
) -> None:
    sessions = session_factory(engine)
    async with sessions() as session:
        assert (await session.execute(text("select count(*) from t"))).scalar() == 0
    assert round_trips == ["_run"], "execute + fetch + close in one call; no ROLLBACK"
    round_trips.clear()
    async with sessions() as session:
        await session.execute(text("insert into t (name) values ('甲')"))
        await session.commit()
    assert round_trips == ["_run", "commit"]


async def test_an_uncommitted_write_is_rolled_back_when_returned(engine: AsyncEngine) -> None:
    """A session closed with a write open still rolls it back: the row is gone and the write
    lock is free for the next writer at once."""
    sessions = session_factory(engine)
    async with sessions() as session:
        await session.execute(text("insert into t (name) values ('没提交')"))
    async with sessions() as session:
        await session.execute(text("insert into t (name) values ('提交了')"))
        await asyncio.wait_for(session.commit(), 2)  # not "database is locked" after 5 s
    async with engine.connect() as connection:
        names = (await connection.execute(text("select name from t"))).scalars().all()
    assert names == ["提交了"]


async def test_errors_are_sqlalchemy_errors_and_the_connection_recovers(
    engine: AsyncEngine,
) -> None:
    sessions = session_factory(engine)
    async with sessions() as session:
        await session.execute(text("insert into t (name) values ('同名')"))
        with pytest.raises(exc.IntegrityError):
            await session.execute(text("insert into t (name) values ('同名')"))
        await session.rollback()
        with pytest.raises(exc.OperationalError):
            await session.execute(text("select nope from t"))
        await session.rollback()
        assert (await session.execute(text("select count(*) from t"))).scalar() == 0


async def test_the_stock_adapter_when_the_versions_do_not_fit(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(sqlite_one_hop, "_supported", lambda: False)
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'stock.db'}")
    try:
        assert not isinstance(engine.dialect.dbapi, sqlite_one_hop.OneHopModule)
        async with engine.connect() as connection:
            assert (await connection.execute(text("select 1"))).scalar() == 1
    finally:
        await engine.dispose()
