"""Reminders on two bot processes sharing one database (issue 48): each due reminder is fired
exactly once.

- On PostgreSQL alone (each process with its own in-memory state, so neither knows the other's
  account): every process may try every reminder; the claim in the database lets one fire it.
- On PostgreSQL + Redis (the deployment's accounts announced): a reminder is fired by the
  process of the account that took it, and one whose account is offline everywhere by exactly
  one of the others.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from pallas.core.accounts import ANNOUNCE_EVERY_S
from tests.e2e import test_processes as procs
from tests.e2e.conftest import sent_texts
from tests.e2e.test_processes import ACCOUNT_A, ACCOUNT_B, GROUP, Cluster
from tests.harness import postgres as pg
from tests.harness.fake_openai import FakeOpenAI
from tests.harness.onebot_peer import OneBotPeer

pytestmark = pytest.mark.e2e

servers = procs.servers
cluster = procs.cluster
OFFLINE = ACCOUNT_B + 11  # an account of the deployment that is connected nowhere now


@pytest.fixture(scope="module")
def postgres_only() -> Iterator[pg.PostgresServer]:
    reason = pg.unavailable_reason()
    if reason is not None:
        pytest.skip(f"no PostgreSQL test server: {reason}")
    with pg.running_postgres() as database:
        yield database


@pytest.fixture
async def pg_cluster(
    postgres_only: pg.PostgresServer, fake_llm: FakeOpenAI, tmp_path: Path
) -> AsyncIterator[Cluster]:
    url = postgres_only.create_database("pallas_cluster")
    a = procs._process(tmp_path / "a", fake_llm, url, "")
    b = procs._process(tmp_path / "b", fake_llm, url, "")
    peers: list[OneBotPeer] = []
    try:
        await asyncio.gather(a.start(timeout=90), b.start(timeout=90))
        for process, account in ((a, ACCOUNT_A), (b, ACCOUNT_B)):
            peer = OneBotPeer(process.ws_url, self_id=account, access_token=process.access_token)
            await peer.connect()
            peers.append(peer)
        yield Cluster(postgres_only, a, b, peers[0], peers[1])
    finally:
        for peer in peers:
            await peer.close()
        for process in (a, b):
            await process.stop()
            print(f"--- {process.workdir.name} log (tail) ---\n{process.tail_log(40)}")
        postgres_only.drop_database("pallas_cluster")


def _insert(where: Cluster, rows: list[tuple[int, int, str]], due: float) -> None:
    values = ", ".join(
        f"({bot}, {GROUP}, {user}, false, '{text}', '', '', {due}, 'pending', {due - 600}, "
        f"NULL, 0, '', NULL, '')"
        for bot, user, text in rows
    )
    where.database.sql(
        "INSERT INTO reminder (bot_id, group_id, user_id, everyone, text, source, rule, next_at,"
        f" status, created_at, fired_at, fire_count, claim, claimed_at, note) VALUES {values}",
        database="pallas_cluster",
    )


def _fired(where: Cluster) -> tuple[list[str], list[str]]:
    a, b = ([t.strip() for t in sent_texts(p.sends(GROUP)) if "到时间啦" in t] for p in where.peers)
    return a, b


async def _settle(where: Cluster, expected: int) -> tuple[list[str], list[str]]:
    deadline = time.monotonic() + 30
    while sum(map(len, _fired(where))) < expected and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    await asyncio.sleep(3.0)  # three more polls on each side: anything doubled would show
    return _fired(where)


ROWS = [
    *((ACCOUNT_A, 57_000 + n, f"A的第{n}件事") for n in range(5)),
    *((ACCOUNT_B, 57_100 + n, f"B的第{n}件事") for n in range(5)),
    *((OFFLINE, 57_200 + n, f"无主的第{n}件事") for n in range(10)),
]
EXPECTED = sorted(f"到时间啦：{text}" for _, _, text in ROWS)


async def test_two_processes_on_one_postgres_fire_each_reminder_once(
    pg_cluster: Cluster,
) -> None:
    _insert(pg_cluster, ROWS, time.time() - 1)
    by_a, by_b = await _settle(pg_cluster, len(ROWS))
    assert sorted(by_a + by_b) == EXPECTED, (by_a, by_b)
    assert pg_cluster.count("reminder WHERE status = 'done' AND fire_count = 1") == len(ROWS)


async def test_with_redis_the_account_that_took_it_fires_it(cluster: Cluster) -> None:
    await asyncio.sleep(ANNOUNCE_EVERY_S + 1)  # each process knows the other's account
    _insert(cluster, ROWS, time.time() - 1)
    by_a, by_b = await _settle(cluster, len(ROWS))
    assert sorted(by_a + by_b) == EXPECTED, (by_a, by_b)
    assert all(f"到时间啦：A的第{n}件事" in by_a for n in range(5))
    assert all(f"到时间啦：B的第{n}件事" in by_b for n in range(5))
    assert cluster.count("reminder WHERE status = 'done' AND fire_count = 1") == len(ROWS)
