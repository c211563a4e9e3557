"""An operator's tasks in the console, in a real browser against the real bot (issue 28).

Two groups answer an @. In Chromium the operator opens group A from the groups page and pauses
it: the next @ there gets no model call and no reply while group B still answers. A persona
edit with an empty name is refused in Chinese and keeps what was typed; a good edit shows in the
next request's system prompt. A SillyTavern book uploaded and switched on for group B makes its
entry appear in the request of a message naming its key. The log tail filtered by group A shows
the pause's audit line; the message history finds a message by text. Screenshots of these pages
at 1366 px and 390 px go to tests/artifacts/console/.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.e2e.conftest import BOT_ID, at_bot
from tests.harness.bot_process import BotProcess
from tests.harness.browser import PHONE, artifacts_dir, browser
from tests.harness.fake_openai import FakeOpenAI, RecordedRequest
from tests.harness.onebot_peer import OneBotPeer

pytestmark = pytest.mark.e2e

GROUP_A, GROUP_B = 64_200_001, 64_200_002
MEMBER = 51_201
TOKEN = "console-operator-token-9c1d"
WIDE = {"width": 1366, "height": 900}
PERSONA_MARK = "你说话时偶尔会提到橘子汽水。"
ENTRY = "龙门是一座建在移动平台上的城市。"
BOOK = {"entries": {"0": {"uid": 0, "key": ["龙门"], "content": ENTRY, "comment": "龙门"}}}


@pytest.fixture
async def operator_bot(tmp_path: Path, fake_llm: FakeOpenAI) -> AsyncIterator[BotProcess]:
    process = BotProcess(
        tmp_path / "bot",
        env_overrides={
            "OPENAI_BASE_URL": fake_llm.base_url,
            "PALLAS_LLM_TIMEOUT_SECONDS": "3",
            "PALLAS_LLM_MAX_RETRIES": "0",
            "PALLAS_CONSOLE_TOKEN": TOKEN,
        },
    )
    await process.start()
    yield process
    await process.stop()
    print(f"--- bot log (tail) ---\n{process.tail_log(80)}")


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


async def shoot(page, name: str) -> None:
    await page.screenshot(path=str(artifacts_dir("console") / f"{name}.png"), full_page=True)


async def test_pause_persona_worldbook_logs_and_history_in_a_real_browser(
    operator_bot: BotProcess, operator_peer: OneBotPeer, fake_llm: FakeOpenAI, tmp_path: Path
) -> None:
    base = f"http://127.0.0.1:{operator_bot.port}/console"
    chat = Chat(operator_peer, fake_llm)
    await chat.ask(GROUP_A, "你好")
    await chat.ask(GROUP_B, "你好")

    async with browser() as chromium:
        context = await chromium.new_context(viewport=WIDE, locale="zh-CN")
        page = await context.new_page()
        await page.goto(f"{base}/login")
        await page.fill("input[name=token]", TOKEN)
        await page.click("button[type=submit]")
        await page.wait_for_selector(f'#groups tr[data-group="{GROUP_A}"]')

        # the groups page opens the overview; pausing there silences group A only
        await page.click(f'#groups tr[data-group="{GROUP_A}"] td:first-child a')
        await page.wait_for_selector("#speaking")
        assert page.url.endswith(f"/g/{GROUP_A}")
        assert await page.text_content("#today-replies") == "1"
        await shoot(page, "overview-desktop")
        page.once("dialog", lambda dialog: asyncio.ensure_future(dialog.accept()))
        await page.click("#pause")
        await page.wait_for_selector("#overview-notice:has-text('已暂停')")
        await shoot(page, "overview-paused-desktop")
        toml = (operator_bot.config_dir / "groups" / f"{GROUP_A}.toml").read_text("utf-8")
        assert "enabled = false" in toml
        await asyncio.sleep(1.2)  # the config store re-reads files at most once a second
        assert await chat.ignored(GROUP_A, "还在吗"), "a paused group got a model call or reply"
        await chat.ask(GROUP_B, "还在吗")

        # a persona edit with an empty name is refused and keeps the text; a good one is used
        await page.goto(f"{base}/personas")
        await shoot(page, "personas-desktop")
        await page.click('#personas tr[data-persona="pallas"] a')
        await page.wait_for_selector("#persona-preview")
        base_text = await page.input_value("#persona-form textarea[name=base]")
        await page.fill("#persona-form input[name=name]", "")
        await page.fill("#persona-form textarea[name=base]", base_text + "\n" + PERSONA_MARK)
        await page.click("#persona-form button[type=submit]")
        await page.wait_for_selector("#persona-error")
        assert "名字（name）：不能为空" in await page.text_content("#persona-error")
        assert PERSONA_MARK in await page.input_value("#persona-form textarea[name=base]")
        await shoot(page, "persona-refused-desktop")
        await page.fill("#persona-form input[name=name]", "帕拉斯")
        await page.click("#persona-form button[type=submit]")
        await page.wait_for_selector("#persona-notice:has-text('已保存')")
        assert PERSONA_MARK in await page.text_content("#persona-preview")
        await shoot(page, "persona-desktop")
        await asyncio.sleep(1.2)
        assert PERSONA_MARK in (await chat.ask(GROUP_B, "今天喝什么")).system_prompt

        # a SillyTavern book imported and switched on for group B fires on its key
        upload = tmp_path / "方舟 地理.json"
        upload.write_text(json.dumps(BOOK, ensure_ascii=False), encoding="utf-8")
        await page.goto(f"{base}/worldbooks?group={GROUP_B}")
        await page.set_input_files("#import-form input[type=file]", str(upload))
        await page.click("#import-form button[type=submit]")
        await page.wait_for_selector("#worldbook-notice:has-text('已导入世界书「方舟_地理」')")
        await page.click('#books tr[data-book="方舟_地理"] button')
        await page.wait_for_selector("#worldbook-notice:has-text('已启用')")
        await shoot(page, "worldbooks-desktop")
        await asyncio.sleep(1.2)
        fired = await chat.ask(GROUP_B, "你去过龙门吗")
        assert ENTRY in json.dumps(fired.messages, ensure_ascii=False)

        # the log tail of group A shows the pause; the history finds a message by its text
        await page.goto(f"{base}/logs?group={GROUP_A}")
        log_text = await page.text_content("#log-lines")
        assert f"console: group {GROUP_A} config enabled = false" in log_text
        assert f"group {GROUP_B}" not in log_text
        await shoot(page, "logs-desktop")
        await page.goto(f"{base}/g/{GROUP_B}/messages")
        await page.fill("input[name=q]", "龙门")
        await page.click("form.search button")
        await page.wait_for_selector("#messages-list tr[data-message]")
        rows = await page.eval_on_selector_all(
            "#messages-list .who", "es => es.map(e => e.textContent)"
        )
        assert rows == ["阿米娅"]
        await shoot(page, "messages-desktop")

        phone = await context.new_page()
        await phone.set_viewport_size(PHONE)
        for name, path in (
            ("overview", f"/g/{GROUP_A}"),
            ("messages", f"/g/{GROUP_B}/messages"),
            ("personas", "/personas"),
            ("persona", "/personas/pallas"),
            ("worldbooks", f"/worldbooks?group={GROUP_B}"),
            ("logs", "/logs"),
            ("not-found", "/g/abc"),
        ):
            await phone.goto(base + path)
            await shoot(phone, f"{name}-phone")
            width = await phone.evaluate("document.documentElement.scrollWidth")
            assert width <= PHONE["width"], f"{name} page overflows a phone screen: {width}px"
        await context.close()
