"""Two bot processes on one PostgreSQL and one Redis, each serving its own QQ account, both
accounts in one group (issue #30, part 3).

As QQ does, every group line reaches both accounts (each with its own message id), so both
processes see the whole burst. What the group and the operator must see:

- the group's daily budget holds exactly across the processes (counted at the fake model);
- every line is stored once and answered once, by the account it @s;
- kill -9 of one process leaves the other serving: its next @ is answered and nothing it had
  recorded is lost.

The servers come from tests/harness/postgres.py and tests/harness/redis_server.py; where their
binaries are missing the test is skipped with the reason (PALLAS_REQUIRE_POSTGRES=1, set by
.ci/run where PostgreSQL is installed, turns a missing PostgreSQL into a failure).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import BOT_ID, sent_texts
from tests.harness import postgres as pg
from tests.harness import redis_server
from tests.harness.bot_process import BotProcess
from tests.harness.fake_openai import FakeOpenAI
from tests.harness.onebot_peer import OneBotPeer

pytestmark = pytest.mark.e2e

GROUP, QUIET_GROUP = 68_000_001, 68_000_002
ACCOUNT_A, ACCOUNT_B = BOT_ID, BOT_ID + 7
B_IDS = 700_000  # account B's message ids: A's id + this (ids are per account)
MEMBERS = tuple(range(56_001, 56_011))  # ten members, one line each
BUDGET = 4
REPLY_SHAPE = "【回复形状与输出契约】"  # only reply-path requests carry it

GROUP_TOML = f"""
other_bot_ids = [{ACCOUNT_A}, {ACCOUNT_B}]
[routing.cooldown]
chat_cooldown_s = 0
[chat]
merge_window_s = 0
[cost.budget]
chat_calls = {BUDGET}
step_pct = 0
ladder = ["phrase"]
"""


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[pg.PostgresServer, redis_server.RedisServer]]:
    reason = pg.unavailable_reason()
    if reason is not None:
        if os.environ.get("PALLAS_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"PALLAS_REQUIRE_POSTGRES=1 but {reason}", pytrace=False)
        pytest.skip(f"no PostgreSQL test server: {reason}")
    reason = redis_server.unavailable_reason()
    if reason is not None:
        pytest.skip(f"no Redis test server: {reason}")
    with pg.running_postgres() as database, redis_server.running_redis() as state:
        yield database, state


def at(account: int, text: str) -> list[dict[str, Any]]:
    return [
        {"type": "at", "data": {"qq": str(account)}},
        {"type": "text", "data": {"text": " " + text}},
    ]


@dataclass
class Cluster:
    database: pg.PostgresServer
    a: BotProcess
    b: BotProcess
    peer_a: OneBotPeer
    peer_b: OneBotPeer

    async def line(self, group: int, user: int, message: list[dict[str, Any]], mid: int) -> None:
        """One group line as both accounts receive it: same time and content, own ids."""
        now = self.peer_a.now()
        events = [
            peer.group_message(group, user, message, message_id=mid + shift, time_=now)
            for peer, shift in ((self.peer_a, 0), (self.peer_b, B_IDS))
        ]
        await asyncio.gather(*(p.send_event(e) for p, e in zip(self.peers, events, strict=True)))

    @property
    def peers(self) -> tuple[OneBotPeer, OneBotPeer]:
        return self.peer_a, self.peer_b

    def count(self, where: str) -> int:
        sql = f"SELECT count(*) FROM {where}"
        return int(self.database.sql(sql, database="pallas_cluster").strip())


def _process(workdir: Path, fake_llm: FakeOpenAI, database_url: str, state_url: str) -> BotProcess:
    process = BotProcess(
        workdir,
        env_overrides={
            "OPENAI_BASE_URL": fake_llm.base_url,
            "PALLAS_LLM_TIMEOUT_SECONDS": "3",
            "PALLAS_LLM_MAX_RETRIES": "0",
            "DATABASE_URL": database_url,
            "PALLAS_STATE_URL": state_url,
        },
    )
    process.prepare()
    (process.config_dir / "groups" / f"{GROUP}.toml").write_text(GROUP_TOML, encoding="utf-8")
    return process


@pytest.fixture
async def cluster(
    servers: tuple[pg.PostgresServer, redis_server.RedisServer],
    fake_llm: FakeOpenAI,
    tmp_path: Path,
) -> AsyncIterator[Cluster]:
    database, state = servers
    url = database.create_database("pallas_cluster")
    a = _process(tmp_path / "a", fake_llm, url, state.url)
    b = _process(tmp_path / "b", fake_llm, url, state.url)
    peers: list[OneBotPeer] = []
    try:
        await asyncio.gather(a.start(timeout=90), b.start(timeout=90))  # both migrate at once
        for process, account in ((a, ACCOUNT_A), (b, ACCOUNT_B)):
            peer = OneBotPeer(process.ws_url, self_id=account, access_token=process.access_token)
            await peer.connect()
            peers.append(peer)
        await asyncio.sleep(0.3)
        yield Cluster(database, a, b, peers[0], peers[1])
    finally:
        for peer in peers:
            await peer.close()
        for process in (a, b):
            await process.stop()
            print(f"--- {process.workdir.name} log (tail) ---\n{process.tail_log(60)}")
        database.drop_database("pallas_cluster")


def reply_calls(fake_llm: FakeOpenAI) -> int:
    return sum(REPLY_SHAPE in r.system_prompt for r in fake_llm.chat_requests())


async def test_a_burst_over_two_processes_keeps_the_budget_and_answers_each_line_once(
    cluster: Cluster, fake_llm: FakeOpenAI
) -> None:
    fake_llm.enqueue(*(f"第{n}个回答" for n in range(1, BUDGET + 1)))
    # ten members, each @ one of the two accounts; every line reaches both processes
    await asyncio.gather(
        *(
            cluster.line(GROUP, user, at((ACCOUNT_A, ACCOUNT_B)[i % 2], "在吗？"), 9_000 + i)
            for i, user in enumerate(MEMBERS)
        )
    )
    sends = [p.wait_for_calls("send_group_msg", count=5, timeout=40) for p in cluster.peers]
    await asyncio.gather(*sends)
    await asyncio.sleep(3.0)  # anything doubled would have been sent by now

    texts_a = sent_texts(cluster.peer_a.sends(GROUP))
    texts_b = sent_texts(cluster.peer_b.sends(GROUP))
    assert len(texts_a) == len(texts_b) == 5, (texts_a, texts_b)  # each its own five @s, once
    answers = [t for t in texts_a + texts_b if "个回答" in t]
    assert len(answers) == BUDGET == reply_calls(fake_llm)  # exact across both processes
    assert all("明天" in t for t in texts_a + texts_b if t not in answers)  # the budget phrase
    assert cluster.count(f"message WHERE group_id = {GROUP} AND NOT is_bot") == len(MEMBERS)

    # kill -9 of A: B goes on serving, and what B recorded stays
    b_sessions = f"llm_chat_message WHERE bot_id = {ACCOUNT_B} AND role = 'assistant'"
    b_answered = cluster.count(b_sessions)
    assert cluster.a.proc is not None
    cluster.a.proc.kill()
    cluster.a.proc.wait(timeout=10)
    fake_llm.enqueue("B 还在")
    await cluster.peer_b.send_event(
        cluster.peer_b.group_message(QUIET_GROUP, MEMBERS[0], at(ACCOUNT_B, "B 你还在吗？"))
    )
    sent = await cluster.peer_b.wait_for_calls("send_group_msg", count=6, timeout=20)
    assert sent_texts(sent)[-1] == "B 还在"
    await asyncio.sleep(1.0)  # the session append follows the delivery
    assert cluster.count(b_sessions) == b_answered + 1
    assert cluster.count(f"message WHERE group_id = {GROUP} AND NOT is_bot") == len(MEMBERS)
