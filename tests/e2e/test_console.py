"""The web console in a real browser (Debian chromium + Playwright) against the real bot.

One flow, as an operator would do it: log in; on the pipeline panel drag a processor to a new
place and switch one off — the next @'s request to the (fake) LLM shows the new order and the
missing section; "重置为默认" through its dialog restores both; the context analyzer of a turn
lists the same sections and token counts as `pallas context --json`. Also: a wrong token gets no
data and a POST without the CSRF token gets 403. Screenshots of every page (desktop and phone)
are saved under tests/artifacts/console/.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import BOT_ID, at_bot, running_bot
from tests.harness.bot_process import REPO, BotProcess
from tests.harness.browser import DESKTOP, PHONE, TALL, artifacts_dir, browser
from tests.harness.fake_openai import FakeOpenAI
from tests.harness.onebot_peer import OneBotPeer

pytestmark = pytest.mark.e2e

GROUP = 64_100_001
MEMBER = 51_101
SUPERUSER = 10_001
TOKEN = "console-test-token-7f3a"
GROUP_NAME = "方舟茶话会"
MARK = "暗号：蓝莓"  # appended to the persona section by a prompt override
TIME_HEADER = "【当前时间】"
GROUP_TOML = f"""# group {GROUP}, written by the console test (this comment must survive)
[[context.prompt_overrides]]
section_id = "persona"
mode = "append"
text = "{MARK}"
"""
# the operator's pages (tests/e2e/test_console_operator.py acts on them)
OPERATOR_PAGES = (
    ("overview", f"/g/{GROUP}"),
    ("personas", "/personas"),
    ("persona", "/personas/pallas"),
    ("worldbooks", f"/worldbooks?group={GROUP}"),
    ("logs", f"/logs?group={GROUP}"),
)


def _group_file(process: BotProcess) -> None:
    (process.config_dir / "groups" / f"{GROUP}.toml").write_text(GROUP_TOML, encoding="utf-8")


@pytest.fixture
async def console_bot(tmp_path: Path, fake_llm: FakeOpenAI) -> AsyncIterator[BotProcess]:
    async with running_bot(
        tmp_path / "bot", fake_llm, PALLAS_CONSOLE_TOKEN=TOKEN, prepare=_group_file
    ) as process:
        yield process


@pytest.fixture
async def console_peer(console_bot: BotProcess) -> AsyncIterator[OneBotPeer]:
    client = OneBotPeer(console_bot.ws_url, self_id=BOT_ID, access_token=console_bot.access_token)
    client.handlers["get_group_list"] = lambda params: [
        {"group_id": GROUP, "group_name": GROUP_NAME, "member_count": 12}
    ]
    await client.connect()
    yield client
    await client.close()


async def ask(peer: OneBotPeer, llm: FakeOpenAI, text: str, count: int) -> str:
    """@ the bot; return the system prompt of the resulting LLM request."""
    llm.enqueue("好的呀")
    await peer.send_event(peer.group_message(GROUP, MEMBER, at_bot(text)))
    requests = await llm.wait_for_requests(count, timeout=15)
    await peer.wait_for_calls("send_group_msg", count=count)
    return requests[count - 1].system_prompt


async def order_on_page(page) -> list[str]:
    return await page.eval_on_selector_all("#pipeline li.proc", "els => els.map(e => e.dataset.id)")


async def shoot(page, name: str) -> None:
    folder = artifacts_dir("console")
    await page.screenshot(path=str(folder / f"{name}.png"), full_page=True)


async def shoot_card(page, selector: str, name: str) -> None:
    """One card of a page on its own (a long page's full shot is too tall to read it in)."""
    await page.locator(selector).screenshot(path=str(artifacts_dir("console") / f"{name}.png"))


async def drag_to_top(page, processor: str) -> None:
    """Drag the processor's handle above the first row, with real mouse moves (the whole list
    must be on screen: mouse coordinates are viewport coordinates)."""
    height = await page.evaluate("document.documentElement.scrollHeight")
    await page.set_viewport_size({**TALL, "height": max(TALL["height"], height + 50)})
    handle = await page.locator(f'#pipeline li[data-id="{processor}"] .handle').bounding_box()
    first = await page.locator("#pipeline li.proc").first.bounding_box()
    await page.mouse.move(handle["x"] + handle["width"] / 2, handle["y"] + handle["height"] / 2)
    await page.mouse.down()
    target_y = first["y"] + 4
    steps = 25
    for i in range(1, steps + 1):
        y = handle["y"] + (target_y - handle["y"]) * i / steps
        await page.mouse.move(handle["x"] + handle["width"] / 2, y)
        await asyncio.sleep(0.02)
    # Rows animate out of the way (120 ms): hover over the top row until it has settled, as a
    # hand does, so a loaded machine does not drop the row one place too low.
    for nudge in (1, 0, 1, 0):
        await asyncio.sleep(0.2)
        first = await page.locator("#pipeline li.proc").first.bounding_box()
        await page.mouse.move(handle["x"] + handle["width"] / 2, first["y"] + 2 + nudge)
    await asyncio.sleep(0.2)
    await page.mouse.up()


async def cli_context(bot: BotProcess) -> dict:
    env = {**os.environ, "DATABASE_URL": bot.database_url}
    result = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "pallas.cli", "context", "--group", str(GROUP), "--json"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


async def test_console_pipeline_analyzer_and_auth_in_a_real_browser(
    console_bot: BotProcess, console_peer: OneBotPeer, fake_llm: FakeOpenAI
) -> None:
    base = f"http://127.0.0.1:{console_bot.port}/console"
    log = console_bot.log_text()
    console_line = log.index(f"Web console: {base}/")
    assert console_line < log.index(console_bot.ws_url)  # printed next to the reverse-WS URL
    first = await ask(console_peer, fake_llm, "你好呀", 1)
    assert MARK in first and TIME_HEADER in first  # the defaults: override applied, time shown
    add = "/pallas memory add group 周五晚上一起打团"
    await console_peer.send_event(console_peer.group_message(GROUP, SUPERUSER, add))
    await console_peer.wait_for_calls("send_group_msg", "send_msg", count=2)

    async with browser() as chromium:
        context = await chromium.new_context(viewport=DESKTOP, locale="zh-CN")
        page = await context.new_page()

        # a wrong token: the login form again, 401, and no group data anywhere
        await page.goto(f"{base}/g/{GROUP}/context")
        assert page.url.endswith("/console/login")
        await page.fill("input[name=token]", "not-the-token")
        await page.click("button[type=submit]")
        assert "令牌不对" in await page.content()
        assert str(GROUP) not in await page.content()
        await shoot(page, "login-desktop")
        anonymous = await context.request.get(f"{base}/g/{GROUP}/context", max_redirects=0)
        assert anonymous.status == 303 and str(GROUP) not in await anonymous.text()

        # the right token: the groups page lists the group with today's numbers
        await page.fill("input[name=token]", TOKEN)
        await page.click("button[type=submit]")
        await page.wait_for_selector(f'#groups tr[data-group="{GROUP}"]')
        await page.fill("input[name=q]", "茶话")  # search by the group's name
        await page.click("form.search button")
        name = await page.text_content(f'#groups tr[data-group="{GROUP}"] td.name')
        assert name == GROUP_NAME
        cookie = next(c for c in await context.cookies() if c["name"] == "pallas_console")
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
        await shoot(page, "groups-desktop")

        # a POST without the CSRF token is refused and changes nothing
        refused = await context.request.post(
            f"{base}/g/{GROUP}/pipeline/reset", form={"x": "1"}, max_redirects=0
        )
        assert refused.status == 403

        # pipeline: drag prompt_overrides to the top, switch current_time off
        await page.goto(f"{base}/g/{GROUP}/pipeline")
        default_order = await order_on_page(page)
        assert default_order.index("prompt_overrides") > default_order.index("persona")
        await shoot(page, "pipeline-desktop")
        await drag_to_top(page, "prompt_overrides")
        await page.wait_for_selector("#panel-notice:has-text('顺序')")
        assert (await order_on_page(page))[0] == "prompt_overrides"
        await page.click('#pipeline li[data-id="current_time"] .switch')
        await page.wait_for_selector("#panel-notice:has-text('关闭 current_time')")
        assert await page.is_disabled('#pipeline li[data-id="guard"] input[role=switch]')
        toml = (console_bot.config_dir / "groups" / f"{GROUP}.toml").read_text(encoding="utf-8")
        assert "this comment must survive" in toml and MARK in toml
        assert 'disabled_processors = ["current_time"]' in toml
        await shoot(page, "pipeline-changed-desktop")

        await asyncio.sleep(1.2)  # the config store re-reads files at most once a second
        second = await ask(console_peer, fake_llm, "现在呢", 2)
        # the override now runs before persona, which replaces the section: the mark is gone
        assert MARK not in second
        assert TIME_HEADER not in second

        # reset through the confirmation dialog
        await page.click("#reset-open")
        await page.wait_for_selector("#reset-dialog[open]")
        await shoot(page, "pipeline-reset-dialog-desktop")
        await page.click("#reset-confirm")
        await page.wait_for_selector("#panel-notice:has-text('重置为默认')")
        assert await order_on_page(page) == default_order
        toml = (console_bot.config_dir / "groups" / f"{GROUP}.toml").read_text(encoding="utf-8")
        assert "processor_order" not in toml and "this comment must survive" in toml
        await asyncio.sleep(1.2)
        third = await ask(console_peer, fake_llm, "再问一次", 3)
        assert MARK in third and TIME_HEADER in third

        # the analyzer of the turn with the changed pipeline matches `pallas context --json`
        await asyncio.sleep(0.5)
        cli = await cli_context(console_bot)
        await page.goto(f"{base}/g/{GROUP}/context")
        await page.wait_for_selector("#sections")
        assert await page.get_attribute("#turn", "data-turn") == cli["turn_id"]
        rows = await page.eval_on_selector_all(
            "#sections tbody tr",
            "rs => rs.map(r => [r.dataset.section, +r.querySelector('.tokens').textContent])",
        )
        assert rows == [[s["id"], s["tokens"]] for s in cli["data"]["sections"]]
        messages = await page.eval_on_selector_all(
            "#messages tbody tr", "rs => rs.map(r => +r.querySelector('.tokens').textContent)"
        )
        assert messages == [m["tokens"] for m in cli["data"]["messages"]]
        await shoot(page, "context-desktop")
        # each retrieval source says in Chinese what it chose or why it was skipped
        retrieval = await page.inner_text("#retrieval")
        assert "chosen" not in retrieval and "skipped" not in retrieval.replace("skipped_", "")
        assert "跳过：" in retrieval or "选中" in retrieval or "没有选中" in retrieval
        assert "群里的说法：" in retrieval and "回复形状" in retrieval  # the learning, too
        assert "见下方完整记录" not in retrieval
        await shoot_card(page, "#retrieval", "context-retrieval-desktop")
        turns = await page.eval_on_selector_all(".turn-list a", "as => as.map(a => a.href)")
        await page.goto(turns[1])  # the turn after the drag: its pipeline trace shows it
        steps = await page.eval_on_selector_all("#steps li", "ls => ls.map(l => l.dataset.step)")
        assert steps[0] == "prompt_overrides"
        step = await page.get_attribute('#steps li[data-step="current_time"]', "class")
        assert step == "disabled"

        for name in ("routing", "config", "messages"):
            await page.goto(f"{base}/g/{GROUP}/{name}")
            await shoot(page, f"{name}-desktop")
        for name, path in OPERATOR_PAGES:
            await page.goto(base + path)
            await shoot(page, f"{name}-desktop")

        # memory: what the admin taught in the group, deleted here after a confirmation
        await page.goto(f"{base}/g/{GROUP}/memory")
        row = page.locator("#memories tr", has_text="周五晚上一起打团")
        ref = await row.get_attribute("data-ref")
        await shoot(page, "memory-desktop")
        page.once("dialog", lambda dialog: asyncio.ensure_future(dialog.accept()))
        await row.locator("button").click()
        await page.wait_for_selector("p.notice:has-text('已删除')")
        assert "周五晚上一起打团" not in await page.text_content("#memories")
        log = console_bot.log_text()
        assert f"admin /pallas memory add group 周五晚上一起打团 by {SUPERUSER} in group" in log
        assert f"admin /pallas memory del {ref} by console in group {GROUP}" in log
        await page.goto(f"{base}/usage")
        await shoot(page, "usage-desktop")

        # the keyboard way: focus a row's ↓ button and press Enter; a rejected move says why
        await page.goto(f"{base}/g/{GROUP}/pipeline")
        await page.focus('#pipeline li[data-id="self_identity"] .move-down')
        await page.keyboard.press("Enter")
        await page.wait_for_selector("#panel-notice:has-text('移动 self_identity')")
        order = await order_on_page(page)
        assert order.index("self_identity") == order.index("group_expression") + 1
        before = (console_bot.config_dir / "groups" / f"{GROUP}.toml").read_text("utf-8")
        await page.click('#pipeline li[data-id="guard"] .move-up')
        await page.wait_for_selector("#panel-error:has-text('already at the top')")
        assert (console_bot.config_dir / "groups" / f"{GROUP}.toml").read_text("utf-8") == before
        await shoot(page, "pipeline-rejected-desktop")

        # the same pages on a phone-sized screen
        phone = await context.new_page()
        await phone.set_viewport_size(PHONE)
        for name, path in (
            ("groups", "/"),
            ("pipeline", f"/g/{GROUP}/pipeline"),
            ("context", f"/g/{GROUP}/context"),
            ("routing", f"/g/{GROUP}/routing"),
            ("memory", f"/g/{GROUP}/memory"),
            ("config", f"/g/{GROUP}/config"),
            ("usage", "/usage"),
            ("messages", f"/g/{GROUP}/messages"),
            *OPERATOR_PAGES,
        ):
            await phone.goto(base + path)
            await shoot(phone, f"{name}-phone")
            if name == "context":
                await shoot_card(phone, "#retrieval", "context-retrieval-phone")
            width = await phone.evaluate("document.documentElement.scrollWidth")
            assert width <= PHONE["width"], f"{name} page overflows a phone screen: {width}px"
        await context.close()


async def test_generated_token_is_printed_once_stored_private_and_warned_about(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    process = BotProcess(
        tmp_path / "bot", env_overrides={"OPENAI_BASE_URL": fake_llm.base_url, "HOST": "0.0.0.0"}
    )
    await process.start()
    await process.stop()
    token_file = process.workdir / "console_token"
    token = token_file.read_text(encoding="utf-8").strip()
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    log = process.log_text()
    assert f"shown only this once): {token}" in log
    assert "HOST=0.0.0.0 and uses a generated token: set PALLAS_CONSOLE_TOKEN" in log

    await process.start()  # a restart keeps the token and does not print it again
    try:
        assert process.log_text().count(token) == 1
        base = f"http://127.0.0.1:{process.port}/console"
        async with httpx.AsyncClient() as client:
            wrong = await client.post(f"{base}/login", data={"token": token[:-1]})
            right = await client.post(f"{base}/login", data={"token": token})
        assert (wrong.status_code, right.status_code) == (401, 303)
    finally:
        await process.stop()
