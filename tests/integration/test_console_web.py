"""The console's HTTP surface over a real runtime (SQLite and PostgreSQL), without a browser:
the auth gates, the groups numbers, memory deletes, config edits, usage cost, the analyzer."""

from __future__ import annotations

import base64
import logging
import re
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from pallas.app import build_app
from pallas.app_wiring import memory_service_for
from pallas.core.clock import FakeClock
from pallas.core.db.repositories.snapshots import InjectionSnapshot
from pallas.core.db.repositories.usage import UsageEntry
from pallas.core.records import StoredMessage
from pallas.core.settings import PallasSettings
from pallas.core.state import MemoryStateStore
from pallas.features.memory.isolation import group_scope
from pallas.runtime import PallasRuntime
from pallas.web import mount_console, start_console
from pallas.web.auth import LOGIN_MAX_FAILURES

REPO = Path(__file__).resolve().parents[2]
TOKEN = "integration-token"
BOT, GROUP, OTHER = 7, 1001, 1002
NOW = 1_764_560_000.0  # 2025-12-01 11:33 Beijing


@pytest.fixture
async def runtime(tmp_path: Path, database_url: str) -> AsyncIterator[PallasRuntime]:
    shutil.copytree(REPO / "config", tmp_path / "config")
    clock = FakeClock(NOW)
    rt = await PallasRuntime.start(
        PallasSettings(
            database_url=database_url,
            pallas_config_dir=tmp_path / "config",
            pallas_data_dir=tmp_path / "data",
            pallas_console_token=TOKEN,
        ),
        clock=clock,
        state=MemoryStateStore(clock),
    )
    yield rt
    await rt.stop()


@pytest.fixture
async def client(runtime: PallasRuntime) -> AsyncIterator[httpx.AsyncClient]:
    app = FastAPI()
    pallas = build_app(runtime)
    console = mount_console(app, pallas.console_backend)
    start_console(console, runtime.settings, runtime.state, runtime.clock, "127.0.0.1", 8080)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://console") as http:
        yield http


async def login(client: httpx.AsyncClient) -> str:
    """Log in; return the CSRF token of the session."""
    response = await client.post("/console/login", data={"token": TOKEN})
    assert response.status_code == 303
    page = await client.get("/console/")
    return re.search(r'name="csrf-token" content="([^"]+)"', page.text).group(1)


def message(mid: int, at: float, *, group: int = GROUP, is_bot: bool = False) -> StoredMessage:
    return StoredMessage(BOT, group, mid, 5 if is_bot else 100 + mid, at, "在吗", is_bot=is_bot)


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", f"/console/g/{GROUP}/context"),
        ("GET", f"/console/g/{GROUP}/memory"),
        ("GET", "/console/usage"),
        ("POST", f"/console/g/{GROUP}/pipeline/reset"),
        ("POST", f"/console/g/{GROUP}/memory/forget"),
    ],
)
async def test_no_session_no_data(
    client: httpx.AsyncClient, runtime: PallasRuntime, method: str, path: str
) -> None:
    await runtime.repos.messages.add(message(1, NOW))
    response = await client.request(method, path)
    assert response.status_code in (303, 401)
    assert str(GROUP) not in response.text
    if method == "GET":
        assert response.headers["location"] == "/console/login"
        partial = await client.get(path, headers={"HX-Request": "true"})
        assert partial.status_code == 401


async def test_login_cookie_and_csrf(client: httpx.AsyncClient) -> None:
    response = await client.post("/console/login", data={"token": TOKEN})
    cookie = response.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie and "path=/console" in cookie
    csrf = await login(client)
    no_csrf = await client.post(f"/console/g/{GROUP}/pipeline/reset")
    wrong = await client.post(f"/console/g/{GROUP}/pipeline/reset", data={"csrf": "x" * 64})
    ok = await client.post(f"/console/g/{GROUP}/pipeline/reset", headers={"X-CSRF-Token": csrf})
    assert (no_csrf.status_code, wrong.status_code, ok.status_code) == (403, 403, 200)
    await client.post("/console/logout", data={"csrf": csrf})
    assert (await client.get("/console/")).status_code == 303


async def test_login_is_rate_limited(client: httpx.AsyncClient) -> None:
    for _ in range(LOGIN_MAX_FAILURES):
        assert (await client.post("/console/login", data={"token": "nope"})).status_code == 401
    blocked = await client.post("/console/login", data={"token": TOKEN})
    assert blocked.status_code == 429 and "set-cookie" not in blocked.headers


async def test_groups_page_counts_today_only(
    client: httpx.AsyncClient, runtime: PallasRuntime
) -> None:
    yesterday = NOW - 86_400
    await runtime.repos.messages.add_many(
        [
            message(1, yesterday),
            message(2, NOW - 60),
            message(3, NOW - 30),
            message(4, NOW - 20, is_bot=True),
            message(5, NOW - 10, group=OTHER),
        ]
    )
    for task, tokens in (("chat", 300), ("cheap", 50), ("chat", 100)):
        await runtime.repos.usage.record(
            UsageEntry(
                now=NOW,
                bot_id=BOT,
                group_id=GROUP,
                task=task,
                model="m",
                prompt_tokens=tokens,
                completion_tokens=0,
            )
        )
    await login(client)
    page = (await client.get("/console/")).text
    row = page.split(f'data-group="{GROUP}"')[1].split("</tr>")[0]
    cells = re.findall(r'<td class="num"[^>]*>([^<]+)</td>', row)
    # today: two member messages and one of the bot's (issue 28: 今日消息 counted the bot's own)
    assert cells == ["2", "1", "2 / 400", "1 / 50", "0 / 0"]
    assert f'data-group="{OTHER}"' in page
    searched = (await client.get("/console/", params={"q": str(OTHER)})).text
    assert f'data-group="{OTHER}"' in searched and f'data-group="{GROUP}"' not in searched


async def test_memory_delete_and_forget_are_scoped_and_logged(
    client: httpx.AsyncClient, runtime: PallasRuntime, caplog: pytest.LogCaptureFixture
) -> None:
    await runtime.repos.messages.add_many([message(1, NOW), message(2, NOW, group=OTHER)])
    service = memory_service_for(runtime)
    mine = await service.remember(
        bot_id=BOT, scope=group_scope(BOT, GROUP), kind="group_memory", text="周五开黑",
        origin="admin",
    )  # fmt: skip
    theirs = await service.remember(
        bot_id=BOT, scope=group_scope(BOT, OTHER), kind="group_memory", text="别的群的事",
        origin="admin",
    )  # fmt: skip
    fact = await service.remember(
        bot_id=BOT, scope=group_scope(BOT, GROUP), kind="person_facts", text="喜欢猫",
        origin="extraction", subject_user_id=55_555,
    )  # fmt: skip
    csrf = await login(client)
    listing = (await client.get(f"/console/g/{GROUP}/memory")).text
    assert "周五开黑" in listing and "喜欢猫" in listing and "别的群的事" not in listing

    caplog.set_level(logging.INFO, logger="pallas.console")
    path = f"/console/g/{GROUP}/memory/delete"
    other = await client.post(path, data={"csrf": csrf, "item": theirs.item.ref})
    assert "没找到" in (await client.get(other.headers["location"])).text
    done = await client.post(path, data={"csrf": csrf, "item": mine.item.ref})
    assert "已删除" in (await client.get(done.headers["location"])).text
    assert f"admin /pallas memory del {mine.item.ref} by console in group {GROUP}" in caplog.text
    forget = f"/console/g/{GROUP}/memory/forget"
    await client.post(forget, data={"csrf": csrf, "user": "55555"})
    listing = (await client.get(f"/console/g/{GROUP}/memory")).text
    assert "周五开黑" not in listing and "喜欢猫" not in listing
    left = await service.repo.list_items(scopes=[group_scope(BOT, OTHER)])
    assert [i.id for i in left] == [theirs.item.id] and fact.item.id != theirs.item.id


async def test_config_edit_rejects_without_writing(
    client: httpx.AsyncClient, runtime: PallasRuntime
) -> None:
    path = runtime.settings.groups_dir / f"{GROUP}.toml"
    path.write_text("# keep me\n[context]\nchar_budget = 9000\n", encoding="utf-8")
    csrf = await login(client)
    url = f"/console/g/{GROUP}/config/value"
    bad = await client.post(url, data={"csrf": csrf, "key": "context.char_budget", "value": "5"})
    assert bad.status_code == 422 and "未保存" in bad.text and "char_budget" in bad.text
    assert "char_budget = 9000" in path.read_text(encoding="utf-8")
    good = await client.post(
        url, data={"csrf": csrf, "key": "context.char_budget", "value": "8000"}
    )
    assert good.status_code == 200 and "已保存" in good.text
    assert path.read_text(encoding="utf-8") == "# keep me\n[context]\nchar_budget = 8000\n"
    page = (await client.get(f"/console/g/{GROUP}/config")).text
    row = page.split('data-key="context.char_budget"')[1].split("</tr>")[0]
    assert re.search(r"<code[^>]*>8000</code></td>\s*<td[^>]*title=\"1001\.toml\">本群文件", row)
    broken = await client.post(
        f"/console/g/{GROUP}/config/file", data={"csrf": csrf, "text": "[context\n"}
    )
    assert broken.status_code == 422 and "cannot parse" in broken.text
    assert "char_budget = 8000" in path.read_text(encoding="utf-8")


async def test_usage_shows_cost_when_prices_are_configured(
    client: httpx.AsyncClient, runtime: PallasRuntime
) -> None:
    (runtime.settings.groups_dir / f"{GROUP}.toml").write_text(
        '[models."gpt-4o-mini"]\ninput_price = 1.0\noutput_price = 4.0\n', encoding="utf-8"
    )
    await runtime.repos.usage.record(
        UsageEntry(
            now=NOW,
            bot_id=BOT,
            group_id=GROUP,
            task="chat",
            model="gpt-4o-mini",
            prompt_tokens=500_000,
            completion_tokens=250_000,
        )
    )
    await runtime.repos.usage.record(
        UsageEntry(
            now=NOW - 3 * 86_400,
            bot_id=BOT,
            group_id=GROUP,
            task="cheap",
            model="gpt-4o-mini",
            prompt_tokens=1_000_000,
            completion_tokens=0,
        )
    )
    await login(client)
    page = (await client.get("/console/usage")).text
    assert '<b id="total-cost">2.5</b>' in page  # 0.5 + 1.0 today, 1.0 three days ago
    assert "<rect" in page and "750000" in page


async def test_groups_page_names_the_database_size_and_oldest_message(
    client: httpx.AsyncClient, runtime: PallasRuntime
) -> None:
    runtime.writer.submit(message(1, NOW - 40 * 86_400))
    await runtime.writer.flush()
    await login(client)
    page = (await client.get("/console/")).text
    assert re.search(r'id="database">数据库 [\d.]+ MB，最早保留的消息 2025-10-22', page)


async def test_usage_shows_cache_hits_endpoints_and_breakers(
    client: httpx.AsyncClient, runtime: PallasRuntime
) -> None:
    """Issue 29: cached prompt tokens are billed at cached_input_price, each endpoint has its
    own row, and the endpoint table shows an open breaker in plain Chinese."""
    (runtime.settings.groups_dir / f"{GROUP}.toml").write_text(
        '[models."deepseek-chat"]\ninput_price = 2.0\ncached_input_price = 0.5\n'
        "output_price = 8.0\n",
        encoding="utf-8",
    )
    for endpoint, cached in (("primary", 600_000), ("backup", 0)):
        await runtime.repos.usage.record(
            UsageEntry(
                now=NOW, bot_id=BOT, group_id=GROUP, task="chat", model="deepseek-chat",
                prompt_tokens=1_000_000, completion_tokens=100_000, cached_tokens=cached,
                endpoint=endpoint,
            )
        )  # fmt: skip
    for _ in range(3):
        await runtime.llm.breakers.record("chat", "primary", False, NOW, "server_error")
    await login(client)
    page = (await client.get("/console/usage")).text
    # primary: 0.4 M × 2 + 0.6 M × 0.5 + 0.1 M × 8 = 1.9; backup: 1 M × 2 + 0.8 = 2.8
    assert '<b id="total-cost">4.7</b>' in page
    assert '<span id="cost-without-cache">5.6</span>' in page
    assert "提示缓存命中：<b>30%</b>" in page
    assert re.search(r'data-label="端点">primary<.*data-label="缓存命中">60%', page)
    assert re.search(r'data-label="端点">backup<.*data-label="缓存命中">0%', page)
    endpoints = page.split('id="endpoints"', 1)[1].split("</table>", 1)[0]
    assert "熔断中" in endpoints and "server_error" in endpoints


async def test_analyzer_shows_a_turn_with_image_hashes(
    client: httpx.AsyncClient, runtime: PallasRuntime
) -> None:
    image = "data:image/jpeg;base64," + base64.b64encode(b"jpeg-bytes" * 100).decode()
    data = {
        "decision": {"outcome": "reply", "score": 60, "threshold": 50, "terms": [["to_me", 55]]},
        "sections": [{"id": "guard", "chars": 10, "tokens": 7, "source": "prompt_guard"}],
        "messages": [{"role": "user", "kind": "current", "chars": 4, "tokens": 3}],
        "budget": {"chars_before": 900, "chars_after": 800, "char_budget": 850, "trims": [
            {"target": "messages", "item": "session:3", "kind": "history", "action": "drop",
             "chars_removed": 100, "reason": "over_budget"}]},
        "pipeline": [{"id": "guard", "status": "ok", "ms": 0.1}],
        "stage_ms": {"assemble": 1.5},
        "request": [
            {"role": "user", "content": [{"type": "image_url", "image_url": {"url": image}}]}
        ],
        "response": "好的", "bubbles": ["好的"],
    }  # fmt: skip
    await runtime.repos.snapshots.save(
        InjectionSnapshot("turn-1", BOT, GROUP, 100, 77, NOW, "gpt-4o-mini", "delivered", data)
    )
    await login(client)
    response = await client.get(f"/console/g/{GROUP}/context")
    assert "script-src 'self'" in response.headers["content-security-policy"]
    assert response.headers["x-frame-options"] == "DENY"
    page = response.text
    assert 'data-turn="turn-1"' in page and 'data-section="guard"' in page
    assert "session:3" in page and "over_budget" in page and "to_me" in page
    assert "sha256:" in page and base64.b64encode(b"jpeg-bytes").decode()[:12] not in page
    other = await client.get(f"/console/g/{OTHER}/context", params={"turn": "turn-1"})
    assert "turn-1" not in other.text  # a turn of another group is not shown here


async def test_the_private_chats_are_named_as_such(
    client: httpx.AsyncClient, runtime: PallasRuntime
) -> None:
    """Group 0 holds every private chat: the console says 私聊, never 群 0."""
    await runtime.repos.messages.add_many([message(1, NOW - 5, group=0), message(2, NOW)])
    csrf = await login(client)
    index = (await client.get("/console/")).text
    row = index.split('data-group="0"')[1].split("</tr>")[0]
    assert ">私聊</a>" in row
    overview = (await client.get("/console/g/0")).text
    assert "群 0" not in overview and "私聊（所有私聊）" in overview
    assert ">私聊</a>" in overview  # the chat's name in the nav
    assert 'id="pause"' not in overview  # private chats follow default.toml's [private]
    refused = await client.post(
        "/console/g/0/config/value", data={"csrf": csrf, "key": "enabled", "value": "false"}
    )
    assert refused.status_code == 422 and "私聊没有单独的配置文件" in refused.text
    assert not (runtime.settings.pallas_config_dir / "groups" / "0.toml").exists()
