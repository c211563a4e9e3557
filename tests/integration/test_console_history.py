"""Issue 28: the routing history, the failed turns and the status page outlive a restart.

Before, the routing page and `/pallas why` read a ring in the StateStore (重启后清空) and the
groups page counted failures from snapshots. Now every decision record is written behind into
`route_decision`; a new process on the same database shows them on the routing page, the error
list, the groups badge and in `/pallas why`.
"""

from __future__ import annotations

import random
import re
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from pallas.admin import AdminContext, find_command
from pallas.app import PallasApp, start_app
from pallas.core.clock import DAY_S, FakeClock
from pallas.core.db import migrate
from pallas.core.db.engine import create_engine, session_factory
from pallas.core.db.repositories.routes import RouteHistoryRepository
from pallas.core.records import StoredMessage
from pallas.core.state import MemoryStateStore
from pallas.core.turn import TurnInput
from pallas.web import mount_console, start_console
from tests.harness.fake_openai import FakeOpenAI, Scripted
from tests.integration.chat_app import (
    ADMIN,
    ALICE,
    BOB,
    BOT,
    GROUP,
    T0,
    RecordingSender,
    group_turn,
    start_chat_app,
)

TOKEN = "history-token"


@pytest.fixture
async def fake_llm() -> AsyncIterator[FakeOpenAI]:
    server = FakeOpenAI(default_reply="好哦", in_process=True)
    await server.start()
    yield server
    await server.stop()


def stored(turn: TurnInput) -> StoredMessage:
    """The message as the edge records it (the console finds groups and names by it)."""
    return StoredMessage(
        BOT, GROUP, turn.message_id, turn.user_id, turn.time, turn.text, card=f"成员{turn.user_id}"
    )


async def handle(app: PallasApp, turn: TurnInput) -> str:
    app.runtime.writer.submit(stored(turn))
    outcome = await app.chat.handle(turn, RecordingSender())
    return str(outcome.outcome)


async def console_client(app: PallasApp) -> httpx.AsyncClient:
    web = FastAPI()
    console = mount_console(web, app.console_backend)
    runtime = app.runtime
    settings = runtime.settings.model_copy(update={"pallas_console_token": TOKEN})
    start_console(console, settings, runtime.state, runtime.clock, "127.0.0.1", 8080)
    client = httpx.AsyncClient(transport=httpx.ASGITransport(app=web), base_url="http://console")
    assert (await client.post("/console/login", data={"token": TOKEN})).status_code == 303
    return client


async def test_decisions_and_failed_turns_are_still_there_after_a_restart(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    clock = FakeClock(T0)
    first, _ = await start_chat_app(tmp_path, fake_llm, clock)
    noise = group_turn("哈哈哈哈", clock, user=BOB)
    asked = group_turn("帕拉斯在吗？", clock, at_bot=True)
    fake_llm.enqueue(Scripted(status=500))
    assert await handle(first, noise) == "skip"
    clock.advance(60)
    assert await handle(first, asked) == "error"
    settings = first.runtime.settings
    await first.stop()

    clock.advance(600)
    again = await start_app(  # a new process: a fresh StateStore, the same database file
        settings, clock=clock, state=MemoryStateStore(clock), superusers=frozenset({ADMIN}),
        rng=random.Random(3), llm_http_client=fake_llm.http_client(),
    )  # fmt: skip
    client = await console_client(again)
    try:
        routing = (await client.get(f"/console/g/{GROUP}/routing")).text
        assert "重启后清空" not in routing
        rows = re.findall(r'<tr class="outcome-(\w+)" id="d\d+" data-message="(\d+)"', routing)
        assert rows[:3] == [  # newest first: the failure, its decision, the skipped line
            ("error", str(asked.message_id)),
            ("reply", str(asked.message_id)),
            ("skip", str(noise.message_id)),
        ]
        assert "哈哈哈哈" in routing and "模型服务出错（5xx）" in routing
        assert '<span title="gate:noise">闸门：无意义的刷屏' in routing, "reasons in Chinese"
        assert f"成员{BOB} <small" in routing, "the member's card next to the QQ id"
        only_errors = (await client.get(f"/console/g/{GROUP}/routing?outcome=error")).text
        assert "哈哈哈哈" not in only_errors and "帕拉斯在吗" in only_errors

        errors = (await client.get("/console/errors")).text
        row = errors.split(f'data-message="{asked.message_id}"')[1].split("</tr>")[0]
        assert f"成员{ALICE}" in row and "帕拉斯在吗" in row and "模型调用" in row
        assert "模型服务出错（5xx）" in row and 'title="llm:server_error"' in row
        assert f"/console/g/{GROUP}/context?turn=" in row, "links the failed turn's analysis"
        assert '今天回复失败 <b class="error">1</b> 轮' in errors

        groups = (await client.get("/console/")).text
        assert "失败 1" in groups

        why = find_command("why")
        assert why is not None
        cmd = AdminContext(again.admin, bot_id=BOT, group_id=GROUP, user_id=ADMIN, args=("5",))
        answer = await why.handler(cmd)
        assert "哈哈哈哈" in answer and "跳过" in answer
        failed = answer.splitlines()[-1]
        assert "帕拉斯在吗" in failed and "模型调用失败（llm:server_error" in failed
        assert failed.endswith("：模型服务出错（5xx）")
    finally:
        await client.aclose()
        await again.stop()


async def test_the_error_list_filters_by_group_and_pages_newest_first(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    clock = FakeClock(T0)
    app, _ = await start_chat_app(tmp_path, fake_llm, clock)
    other = 600_002
    for i in range(3):
        app.runtime.repos.routes.add(
            {
                "time": T0 + i,
                "bot": BOT,
                "group": GROUP,
                "user": ALICE,
                "message_id": 100 + i,
                "text": f"第{i}句",
                "outcome": "error",
                "stage": "llm",
                "reason": "timeout",
            }
        )
    app.runtime.repos.routes.add({"time": T0 + 9, "bot": BOT, "group": other, "user": BOB,
                                  "message_id": 200, "text": "别的群", "outcome": "error",
                                  "stage": "turn", "reason": "exception"})  # fmt: skip
    client = await console_client(app)
    try:
        everything = (await client.get("/console/errors")).text
        order = re.findall(r'<tr data-message="(\d+)"', everything)
        assert order == ["200", "102", "101", "100"]
        assert "处理这条消息时程序出错（见日志）" in everything and "模型超时" in everything
        mine = (await client.get(f"/console/errors?group={GROUP}")).text
        assert re.findall(r'<tr data-message="(\d+)"', mine) == ["102", "101", "100"]
        assert "别的群" not in mine
    finally:
        await client.aclose()
        await app.stop()


async def test_the_history_reads_back_in_order_on_each_backend(database_url: str) -> None:
    """The repository on SQLite and PostgreSQL: a group's newest records oldest first, one
    outcome, the failures of the day per group (queued rows are read too: readers flush)."""
    await migrate.upgrade(database_url)
    engine = create_engine(database_url)
    routes = RouteHistoryRepository(session_factory(engine))
    try:
        for i in range(6):
            routes.add({"time": T0 + i, "bot": BOT, "group": GROUP, "user": ALICE,
                        "message_id": i, "text": "在吗\x00", "outcome": "error" if i % 3 == 0
                        else "skip", "stage": "llm", "reason": "timeout",
                        "terms": [("addressed", 50)]})  # fmt: skip
        routes.add({"time": T0 - DAY_S, "bot": BOT, "group": 9, "user": BOB, "message_id": 1,
                    "outcome": "error", "stage": "turn", "reason": "exception"})  # fmt: skip
        recent = await routes.recent(BOT, GROUP, limit=4)
        assert [r["message_id"] for r in recent] == [2, 3, 4, 5]
        assert recent[0]["terms"] == [["addressed", 50]]
        errors = await routes.recent(BOT, GROUP, outcome="error")
        assert [r["message_id"] for r in errors] == [0, 3]
        assert await routes.failure_counts(T0 - 1) == {(BOT, GROUP): 2}
        failures = await routes.failures(limit=2)
        assert [(f.group_id, f.message_id) for f in failures] == [(9, 1), (GROUP, 3)]
        older = await routes.failures(before_id=failures[-1].id)
        assert [(f.group_id, f.message_id) for f in older] == [(GROUP, 0)]
    finally:
        await engine.dispose()
