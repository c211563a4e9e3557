"""An operator's tasks in the console, in a real browser against the real bot (issue 28).

The whole run happens once at 1366 px and once on a 390 px phone, each against its own bot. Two
groups answer an @; a member's line of noise gets no reply; one @ fails at the model (HTTP 500);
a member has the bot remember a fact. In Chromium the operator finds today's activity on the
status page and the group's overview, finds why the noise got no reply in 路由, opens the failed
turn from 错误 and sees its error, pauses group A (the next @ there gets no model call and no
reply while group B still answers), edits a persona (an empty name is refused in Chinese and
keeps what was typed; a good edit is in the next request's system prompt), imports a
SillyTavern book for group B (its entry is in the request of a message naming its key), finds
the member's memory by card and deletes it, checks the log tail and the message history, then
logs out: a saved copy of the old cookie no longer opens anything. Every page is screenshotted
at both widths into tests/artifacts/console/, and none is wider than the phone's screen.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.e2e.conftest import BOT_ID, at_bot, running_bot
from tests.harness.bot_process import BotProcess
from tests.harness.browser import PHONE, artifacts_dir, browser
from tests.harness.fake_openai import FakeOpenAI, RecordedRequest, Scripted
from tests.harness.onebot_peer import OneBotPeer

pytestmark = pytest.mark.e2e

GROUP_A, GROUP_B = 64_200_001, 64_200_002
MEMBER, BYSTANDER = 51_201, 51_209
TOKEN = "console-operator-token-9c1d"
WIDE = {"width": 1366, "height": 900}
WIDTHS = [pytest.param(("desktop", WIDE), id="1366px"), pytest.param(("phone", PHONE), id="390px")]
NOISE = "哈哈哈哈哈哈"
FACT = "我喜欢橘子汽水"
STORED = "喜欢橘子汽水"  # kept as 「TA喜欢橘子汽水」
PERSONA_MARK = "你说话时偶尔会提到橘子汽水。"
ENTRY = "龙门是一座建在移动平台上的城市。"
BOOK = {"entries": {"0": {"uid": 0, "key": ["龙门"], "content": ENTRY, "comment": "龙门"}}}


@pytest.fixture
async def operator_bot(tmp_path: Path, fake_llm: FakeOpenAI) -> AsyncIterator[BotProcess]:
    async with running_bot(tmp_path / "bot", fake_llm, PALLAS_CONSOLE_TOKEN=TOKEN) as process:
        yield process


@pytest.fixture
async def operator_peer(operator_bot: BotProcess) -> AsyncIterator[OneBotPeer]:
    client = OneBotPeer(operator_bot.ws_url, self_id=BOT_ID, access_token=operator_bot.access_token)
    client.handlers["get_group_list"] = lambda params: [
        {"group_id": GROUP_A, "group_name": "甲群", "member_count": 9},
        {"group_id": GROUP_B, "group_name": "乙群", "member_count": 9},
    ]
    await client.connect()
    yield client
    await client.close()


class Chat:
    """@ the bot in a group and wait for the model request and the reply."""

    def __init__(self, peer: OneBotPeer, llm: FakeOpenAI) -> None:
        self.peer, self.llm = peer, llm

    async def ask(self, group: int, text: str) -> RecordedRequest:
        """The request the model got for this @."""
        requests, sends = len(self.llm.chat_requests()), len(self.peer.sends(group))
        self.llm.enqueue("好的呀")
        event = self.peer.group_message(group, MEMBER, at_bot(text), card="阿米娅")
        await self.peer.send_event(event)
        got = await self.llm.wait_for_requests(requests + 1, timeout=15)
        deadline = asyncio.get_running_loop().time() + 15
        while len(self.peer.sends(group)) <= sends:
            assert asyncio.get_running_loop().time() < deadline, "no reply sent"
            await asyncio.sleep(0.05)
        return got[requests]

    async def ignored(self, group: int, text: str) -> bool:
        requests, sends = len(self.llm.chat_requests()), len(self.peer.sends(group))
        await self.peer.send_event(self.peer.group_message(group, MEMBER, at_bot(text)))
        await asyncio.sleep(3)
        return len(self.llm.chat_requests()) == requests and len(self.peer.sends(group)) == sends

    async def fails(self, group: int, text: str) -> int:
        """An @ whose model call answers HTTP 500: the message id (nothing is sent)."""
        requests = len(self.llm.chat_requests())
        self.llm.enqueue(Scripted(status=500))
        event = self.peer.group_message(group, MEMBER, at_bot(text), card="阿米娅")
        await self.peer.send_event(event)
        await self.llm.wait_for_requests(requests + 1, timeout=15)
        return int(event["message_id"])

    async def says(self, group: int, text: str, *, member: int, card: str) -> int:
        """A plain line (no @): the message id."""
        event = self.peer.group_message(group, member, text, card=card)
        await self.peer.send_event(event)
        return int(event["message_id"])

    async def teaches(self, group: int, text: str) -> None:
        sends = len(self.peer.sends(group))
        event = self.peer.group_message(group, MEMBER, at_bot(f"记住 {text}"), card="阿米娅")
        await self.peer.send_event(event)
        deadline = asyncio.get_running_loop().time() + 15
        while len(self.peer.sends(group)) <= sends:
            assert asyncio.get_running_loop().time() < deadline, "the memory command got no answer"
            await asyncio.sleep(0.05)


def shot_path(name: str) -> str:
    return str(artifacts_dir("console") / f"{name}.png")


async def shoot(page, name: str) -> None:
    await page.screenshot(path=shot_path(name), full_page=True)


async def log_in(page, base: str) -> None:
    await page.goto(f"{base}/login")
    await page.fill("input[name=token]", TOKEN)
    await page.click("button[type=submit]")
    await page.wait_for_selector(f'#groups tr[data-group="{GROUP_A}"]')


async def fits(page, name: str, size: dict[str, int]) -> None:
    width = await page.evaluate("document.documentElement.scrollWidth")
    assert width <= size["width"], f"{name} is {width}px wide on a {size['width']}px screen"


async def find_today_and_why_not(page, base: str, noise_id: int) -> None:
    """Today's activity on 状态 and the group's overview; why the noise got no reply."""
    await page.goto(f"{base}/status")
    assert int(await page.text_content("#today-messages")) >= 4
    assert await page.text_content("#today-failed b") == "1"
    await page.click("header.top a[href$='/console/']")  # 群
    await page.click(f'#groups tr[data-group="{GROUP_A}"] td:first-child a')
    await page.wait_for_selector("#speaking")
    assert await page.text_content("#today-replies") == "2"  # the greeting and 记住啦～
    await page.click("nav.tabs a[href$='/routing']")
    row = page.locator(f'#decisions tr[data-message="{noise_id}"]')
    await row.wait_for()
    text = await row.inner_text()
    assert NOISE in text and "路人" in text and "无意义的刷屏" in text, text
    assert re.search(r"跳过|静默|短句", text), f"no outcome that says it stayed quiet: {text}"


async def open_the_failed_turn(page, base: str, failed_id: int) -> None:
    await page.goto(f"{base}/errors")
    row = page.locator(f'#errors tr[data-message="{failed_id}"]')
    assert "模型服务出错（5xx）" in await row.inner_text()
    await row.locator("a", has_text="路由").click()
    failed = page.locator(f'#decisions tr[data-message="{failed_id}"]')
    await failed.wait_for()
    assert "回复失败" in await failed.inner_text()
    assert "模型服务出错（5xx）" in await failed.inner_text()


async def pause_group_a(page, base: str, bot: BotProcess, chat: Chat) -> None:
    await page.goto(f"{base}/g/{GROUP_A}")
    await page.click("#pause")
    await page.wait_for_selector("#overview-notice:has-text('已暂停')")
    toml = (bot.config_dir / "groups" / f"{GROUP_A}.toml").read_text("utf-8")
    assert "enabled = false" in toml
    await asyncio.sleep(1.2)  # the config store re-reads files at most once a second
    assert await chat.ignored(GROUP_A, "还在吗"), "a paused group got a model call or reply"
    await chat.ask(GROUP_B, "还在吗")


async def edit_the_persona(page, base: str, chat: Chat) -> None:
    """An empty name is refused and keeps the text; a good edit is in the next request."""
    await page.goto(f"{base}/personas")
    await page.click('#personas tr[data-persona="pallas"] a')
    await page.wait_for_selector("#persona-preview")
    base_text = await page.input_value("#persona-form textarea[name=base]")
    await page.fill("#persona-form input[name=name]", "")
    await page.fill("#persona-form textarea[name=base]", base_text + "\n" + PERSONA_MARK)
    await page.click("#persona-form button[type=submit]")
    await page.wait_for_selector("#persona-error")
    assert "名字（name）：不能为空" in await page.text_content("#persona-error")
    assert PERSONA_MARK in await page.input_value("#persona-form textarea[name=base]")
    await page.fill("#persona-form input[name=name]", "帕拉斯")
    await page.click("#persona-form button[type=submit]")
    await page.wait_for_selector("#persona-notice:has-text('已保存')")
    assert PERSONA_MARK in await page.text_content("#persona-preview")
    await asyncio.sleep(1.2)
    assert PERSONA_MARK in (await chat.ask(GROUP_B, "今天喝什么")).system_prompt


async def import_a_book(page, base: str, chat: Chat, folder: Path) -> None:
    upload = folder / "方舟 地理.json"
    upload.write_text(json.dumps(BOOK, ensure_ascii=False), encoding="utf-8")
    await page.goto(f"{base}/worldbooks?group={GROUP_B}")
    await page.set_input_files("#import-form input[type=file]", str(upload))
    await page.click("#import-form button[type=submit]")
    await page.wait_for_selector("#worldbook-notice:has-text('已导入世界书「方舟_地理」')")
    await page.click('#books tr[data-book="方舟_地理"] button')
    await page.wait_for_selector("#worldbook-notice:has-text('已启用')")
    await asyncio.sleep(1.2)
    fired = await chat.ask(GROUP_B, "你去过龙门吗")
    assert ENTRY in json.dumps(fired.messages, ensure_ascii=False)


async def delete_the_memory(page, base: str, label: str) -> None:
    """Found by the member's card (not a QQ number), deleted, gone."""
    await page.goto(f"{base}/g/{GROUP_A}/memory")
    await page.fill("input[name=user]", "阿米娅")
    await page.click("form.search button")
    await page.wait_for_selector("#member-match")
    row = page.locator("#memories tr[data-ref]", has_text=STORED)
    assert await row.count() == 1, await page.inner_text("#memories")
    assert "群友教的" in await row.inner_text()
    await shoot(page, f"memory-by-card-{label}")
    await row.locator("button", has_text="删除").click()  # the confirm dialog is accepted
    await page.wait_for_selector("p.notice")
    assert await page.locator("#memories tr[data-ref]", has_text=STORED).count() == 0


async def logs_and_history(page, base: str) -> None:
    await page.goto(f"{base}/logs?group={GROUP_A}")
    log_text = await page.text_content("#log-lines")
    assert f"console: group {GROUP_A} config enabled = false" in log_text
    assert f"group {GROUP_B}" not in log_text
    await page.goto(f"{base}/g/{GROUP_B}/messages")
    await page.fill("input[name=q]", "龙门")
    await page.click("form.search button")
    await page.wait_for_selector("#messages-list tr[data-message]")
    rows = await page.eval_on_selector_all(
        "#messages-list .who", "es => es.map(e => e.textContent)"
    )
    assert rows == ["阿米娅"]


def every_page() -> tuple[tuple[str, str], ...]:
    return (
        ("status", "/status"), ("groups", "/"), ("usage", "/usage"), ("errors", "/errors"),
        ("personas", "/personas"), ("persona", "/personas/pallas"),
        ("worldbooks", f"/worldbooks?group={GROUP_B}"), ("logs", "/logs"),
        ("settings", "/settings"), ("overview", f"/g/{GROUP_A}"),
        ("messages", f"/g/{GROUP_B}/messages"), ("pipeline", f"/g/{GROUP_B}/pipeline"),
        ("context", f"/g/{GROUP_B}/context"), ("routing", f"/g/{GROUP_A}/routing"),
        ("memory", f"/g/{GROUP_A}/memory"), ("config", f"/g/{GROUP_B}/config"),
        ("not-found", "/g/abc"),
    )  # fmt: skip


async def shoot_every_page(page, base: str, label: str, size: dict[str, int]) -> None:
    for name, path in every_page():
        await page.goto(base + path)
        await shoot(page, f"{name}-{label}")
        await fits(page, name, size)
    await page.goto(f"{base}/g/{GROUP_B}/config")
    height = await page.evaluate("document.documentElement.scrollHeight")
    assert height < 6000, f"the config page is a {height}px wall"
    await page.fill("#config-filter", "cooldown")
    await page.wait_for_selector("details.cfg-group[open]")
    await shoot(page, f"config-filtered-{label}")


async def log_out_and_reuse_the_cookie(chromium, page, base: str, size: dict[str, int]) -> None:
    saved = await page.context.cookies()
    assert any(c["name"] == "pallas_console" for c in saved)
    await page.goto(f"{base}/status")
    await page.click("header.top button.link")  # 退出
    await page.wait_for_selector("input[name=token]")
    again = await chromium.new_context(viewport=size, locale="zh-CN")
    await again.add_cookies(saved)  # a copy of the cookie made before logging out
    stale = await again.new_page()
    await stale.goto(f"{base}/g/{GROUP_A}/memory")
    assert stale.url.endswith("/console/login"), "the old cookie still opens the console"
    assert await stale.query_selector("input[name=token]")
    await again.close()


@pytest.mark.parametrize("screen", WIDTHS)
async def test_an_operators_tasks_end_to_end_in_a_real_browser(
    operator_bot: BotProcess,
    operator_peer: OneBotPeer,
    fake_llm: FakeOpenAI,
    tmp_path: Path,
    screen: tuple[str, dict[str, int]],
) -> None:
    label, size = screen
    base = f"http://127.0.0.1:{operator_bot.port}/console"
    chat = Chat(operator_peer, fake_llm)
    await chat.ask(GROUP_A, "你好")
    await chat.ask(GROUP_B, "你好")
    noise_id = await chat.says(GROUP_A, NOISE, member=BYSTANDER, card="路人")
    failed_id = await chat.fails(GROUP_B, "今天几号？")
    await chat.teaches(GROUP_A, FACT)

    async with browser() as chromium:
        context = await chromium.new_context(viewport=size, locale="zh-CN")
        page = await context.new_page()
        page.on("dialog", lambda dialog: asyncio.ensure_future(dialog.accept()))
        await log_in(page, base)
        await find_today_and_why_not(page, base, noise_id)
        await open_the_failed_turn(page, base, failed_id)
        await pause_group_a(page, base, operator_bot, chat)
        await edit_the_persona(page, base, chat)
        await import_a_book(page, base, chat, tmp_path)
        await delete_the_memory(page, base, label)
        await logs_and_history(page, base)
        await shoot_every_page(page, base, label, size)
        await log_out_and_reuse_the_cookie(chromium, page, base, size)
        await context.close()
