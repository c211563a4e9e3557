"""Fixtures shared by the integration tests: every database backend Pallas supports, a
throwaway Redis server per module (`redis_server`) for the state-store tests, and the fake
OpenAI-compatible model in-process (`fake_llm`; a module wanting another default reply
defines its own).

`database_url` runs a test once per backend — `[sqlite]` on a new file in `tmp_path`,
`[postgres]` on a new database of one throwaway PostgreSQL server per session
(tests/harness/postgres.py); both stand at the migration heads.
The PostgreSQL variants carry the `postgres` marker (`pytest -m postgres` / `-m "not postgres"`)
and are skipped, with the reason, where no server can be started — unless
PALLAS_REQUIRE_POSTGRES=1 (set by CI), which turns that skip into a failure.

Each test gets a database of its own, copied from a template that `migrate.upgrade` (the
start-up migration) brought to heads once per session (per xdist worker): a PostgreSQL
`CREATE DATABASE … TEMPLATE`, a SQLite file copy (tests/harness/sqlite_template.py); tests
still call `migrate.upgrade` (or start a runtime) on it, a no-op there. A new database per
test, not one emptied between tests, because background work a test leaves behind (e.g. the
memory service's delayed access-count flush) must not land in the next test's rows, which
reuse ids.

Background jobs a test started and did not drain (`pallas.core.background.BackgroundJobs`: a
memory service built with `memory_service_for` is owned by no runtime, and a member's
consolidation waits 60 s before it runs) are cancelled when the test ends
(`_background_jobs_end_with_their_test`): on the session's one event loop they ran on inside
later tests, against a database already dropped, and a later test watching the log for
errors failed on them.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Iterator
from itertools import count
from pathlib import Path

import pytest

from pallas.core.background import BackgroundJobs
from pallas.core.db import migrate
from tests.harness import postgres as pg
from tests.harness.fake_openai import FakeOpenAI
from tests.harness.redis_server import RedisServer, running_redis, unavailable_reason
from tests.harness.sqlite_template import migrated_copy

BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
_JOB = BackgroundJobs._logged.__qualname__  # the coroutine every background job runs in
TEMPLATE = "pallas_template"
_databases = count(1)


def _background_jobs() -> set[asyncio.Task[object]]:
    try:
        tasks = asyncio.all_tasks()
    except RuntimeError:  # no running loop
        return set()
    return {t for t in tasks if getattr(t.get_coro(), "__qualname__", "") == _JOB}


@pytest.fixture(autouse=True)
async def _background_jobs_end_with_their_test() -> AsyncIterator[None]:
    before = _background_jobs()
    yield
    left = _background_jobs() - before
    for task in left:
        task.cancel()
    if left:
        await asyncio.wait(left, timeout=1.0)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[pg.PostgresServer]:
    reason = pg.unavailable_reason()
    if reason is not None:
        if os.environ.get("PALLAS_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"PALLAS_REQUIRE_POSTGRES=1 but {reason}", pytrace=False)
        pytest.skip(f"no PostgreSQL test server: {reason}")
    with pg.running_postgres() as server:
        yield server


@pytest.fixture(scope="session")
async def postgres_template(postgres_server: pg.PostgresServer) -> str:
    """A database brought to heads by the start-up migration, to copy test databases from."""
    await migrate.upgrade(postgres_server.create_database(TEMPLATE))
    return TEMPLATE


@pytest.fixture
def postgres_database(postgres_server: pg.PostgresServer, postgres_template: str) -> Iterator[str]:
    """A new PostgreSQL database at heads for this test (dropped after it). Yields its URL."""
    name = f"pallas_test_{next(_databases)}"
    url = postgres_server.create_database(name, template=postgres_template)
    yield url
    postgres_server.drop_database(name)


@pytest.fixture(params=BACKENDS)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The URL of an empty database at the heads on each backend (see the module docstring)."""
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{migrated_copy(tmp_path / 'pallas.db')}"
    return request.getfixturevalue("postgres_database")


@pytest.fixture(scope="module")
def redis_server() -> Iterator[RedisServer]:
    """A throwaway redis-server for the module's tests; skipped, with the reason, without one."""
    reason = unavailable_reason()
    if reason:
        pytest.skip(reason)
    with running_redis() as server:
        yield server


@pytest.fixture
async def fake_llm() -> AsyncIterator[FakeOpenAI]:
    """The fake model, served in-process (hand `fake_llm.http_client()` to the runtime)."""
    server = FakeOpenAI(in_process=True)
    await server.start()
    yield server
    await server.stop()
