"""The console's status page and error list against the real bot, across a restart (issue 28).

An operator opens 状态: the connected account's QQ id, nickname and OneBot implementation (asked
with get_login_info / get_version_info when it connected), the model endpoints, today's totals.
A member's @ fails at the model (HTTP 500); the bot is restarted; 错误 still lists the failed
turn with its reason in Chinese, 路由 still shows the decisions, `/pallas why` still tells.
Screenshots of both pages (desktop and phone) go to tests/artifacts/console/.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import BOT_ID, at_bot, running_bot, sent_texts
from tests.harness.bot_process import BotProcess
from tests.harness.browser import DESKTOP, PHONE, artifacts_dir, browser
from tests.harness.fake_openai import FakeOpenAI, Scripted
from tests.harness.onebot_peer import OneBotPeer

pytestmark = pytest.mark.e2e

GROUP = 64_200_001
MEMBER, OTHER, SUPERUSER = 51_201, 51_202, 10_001
TOKEN = "status-test-token-1c9e"
NICKNAME = "帕拉斯测试号"
IMPLEMENTATION = ("NapCat.Onebot", "4.8.99")


@pytest.fixture
async def status_bot(tmp_path: Path, fake_llm: FakeOpenAI) -> AsyncIterator[BotProcess]:
    async with running_bot(tmp_path / "bot", fake_llm, PALLAS_CONSOLE_TOKEN=TOKEN) as process:
        yield process


async def connect(bot: BotProcess) -> OneBotPeer:
    """A NapCat-like account: it tells its nickname and its implementation when asked."""
    peer = OneBotPeer(bot.ws_url, self_id=BOT_ID, access_token=bot.access_token)
    peer.handlers["get_login_info"] = lambda params: {"user_id": BOT_ID, "nickname": NICKNAME}
    peer.handlers["get_version_info"] = lambda params: {
        "app_name": IMPLEMENTATION[0], "app_version": IMPLEMENTATION[1], "protocol_version": "v11"
    }  # fmt: skip
    peer.handlers["get_group_list"] = lambda params: [
        {"group_id": GROUP, "group_name": "状态测试群", "member_count": 5}
    ]
    await peer.connect()
    return peer


async def page_until(
    http: httpx.AsyncClient, path: str, done: Callable[[str], bool], timeout: float = 10.0
) -> str:
    """GET `path` until `done(text)` (the bot writes some things a moment later)."""
    deadline = time.monotonic() + timeout
    while True:
        text = (await http.get(path)).text
        if done(text) or time.monotonic() > deadline:
            return text
        await asyncio.sleep(0.2)


async def logged_in(bot: BotProcess) -> httpx.AsyncClient:
    http = httpx.AsyncClient(base_url=f"http://127.0.0.1:{bot.port}/console")
    assert (await http.post("/login", data={"token": TOKEN})).status_code == 303
    return http


def error_row(page: str, message_id: int) -> str:
    return page.split(f'data-message="{message_id}"')[1].split("</tr>")[0]


async def test_status_and_the_error_list_in_a_real_bot_across_a_restart(
    status_bot: BotProcess, fake_llm: FakeOpenAI
) -> None:
    peer = await connect(status_bot)
    await peer.send_event(peer.group_message(GROUP, OTHER, "哈哈哈哈"))
    fake_llm.enqueue(Scripted(status=500))
    failed = peer.group_message(GROUP, MEMBER, at_bot("今天几号？"), card="阿米娅")
    await peer.send_event(failed)
    await fake_llm.wait_for_requests(1)
    http = await logged_in(status_bot)
    try:
        status = await page_until(http, "/status", lambda t: NICKNAME in t)
        account = status.split(f'data-account="{BOT_ID}"')[1].split("</tr>")[0]
        assert NICKNAME in account and "在线" in account
        assert " ".join(IMPLEMENTATION) in account and "v11" in account
        assert 'data-endpoint="chat:primary"' in status
        assert 'id="refused"' not in status  # nothing refused yet: no line
        await peer.send_raw("{not json")  # a frame the edge refuses (the connection stays)
        status = await page_until(http, "/status", lambda t: 'id="refused"' in t)
        assert "启动以来拒收了 1 个 OneBot 帧" in status and "不是 JSON 1" in status
        errors = await page_until(http, "/errors", lambda t: "模型服务出错" in t)
        assert "模型服务出错（5xx）" in error_row(errors, failed["message_id"])
        status = (await http.get("/status")).text  # the breaker saw the failure
        chat = status.split('data-endpoint="chat:primary"')[1].split("</tr>")[0]
        assert "最近一次调用失败" in chat and "模型服务出错（5xx）" in chat
        await shoot_pages(status_bot, (("status", "/status"),))
    finally:
        await http.aclose()
        await peer.close()

    await status_bot.stop()
    await status_bot.start()
    peer = await connect(status_bot)
    http = await logged_in(status_bot)
    try:
        errors = (await http.get("/errors")).text
        row = error_row(errors, failed["message_id"])
        assert "阿米娅" in row and "今天几号" in row and "模型调用" in row
        assert "模型服务出错（5xx）" in row and 'title="llm:server_error"' in row
        routing = (await http.get(f"/g/{GROUP}/routing")).text
        assert "哈哈哈哈" in routing and "回复失败" in routing and "重启后清空" not in routing
        status = await page_until(http, "/status", lambda t: NICKNAME in t)
        assert re.search(r'id="today-failed"[^>]*><b>1</b> 轮', status)
        assert re.search(r'id="today-messages">2<', status), "the members' two messages"
        await shoot_pages(status_bot, (("errors", "/errors"),
                                       ("routing-history", f"/g/{GROUP}/routing")))  # fmt: skip
    finally:
        await http.aclose()

    try:
        await peer.send_event(peer.group_message(GROUP, SUPERUSER, "/pallas why 5"))
        answer = sent_texts(await peer.wait_for_calls("send_msg", "send_group_msg"))[-1]
        assert "哈哈哈哈" in answer and "模型调用失败" in answer and "模型服务出错（5xx）" in answer
    finally:
        await peer.close()


async def shoot_pages(bot: BotProcess, shots: tuple[tuple[str, str], ...]) -> None:
    """(name, path) pages at both widths; no page wider than a phone's screen."""
    base = f"http://127.0.0.1:{bot.port}/console"
    folder = artifacts_dir("console")
    async with browser() as chromium:
        context = await chromium.new_context(viewport=DESKTOP, locale="zh-CN")
        page = await context.new_page()
        await page.goto(f"{base}/login")
        await page.fill("input[name=token]", TOKEN)
        await page.click("button[type=submit]")
        await page.wait_for_selector("#groups")
        for size_name, size in (("desktop", DESKTOP), ("phone", PHONE)):
            await page.set_viewport_size(size)
            for name, path in shots:
                await page.goto(base + path)
                await page.screenshot(path=str(folder / f"{name}-{size_name}.png"), full_page=True)
                if size_name == "phone":
                    width = await page.evaluate("document.documentElement.scrollWidth")
                    assert width <= PHONE["width"], f"{name} overflows a phone screen: {width}px"
        await context.close()
