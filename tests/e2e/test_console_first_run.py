"""An operator's first hour in a browser (issue 49), against the real bot process.

A fresh data directory and no key: the 状态 page opens with the first-run checklist, replies
off said first. On the 模型 page the operator picks a preset, points it at the fake provider,
types a wrong key — 测试连接 says the key is refused, in Chinese — then the right one: 测试连接
answers, 保存 applies it, and the next @ in the group is answered by the same process, no
restart. Run at 1366 px (the flow) and at 390 px (the refusal, and no page wider than the
phone). Screenshots of the checklist and the model page go to tests/artifacts/first-run/.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, cast

import pytest

from tests.e2e.conftest import BOT_ID, at_bot, sent_texts
from tests.harness.bot_process import BotProcess
from tests.harness.browser import PHONE, artifacts_dir, browser
from tests.harness.fake_openai import FakeOpenAI
from tests.harness.onebot_peer import OneBotPeer

pytestmark = pytest.mark.e2e

GROUP = 64_900_049
MEMBER = 51_949
TOKEN = "first-run-console-token-49"
KEY = "sk-first-run-key-49ab"
LAPTOP = {"width": 1366, "height": 900}


@pytest.fixture
async def fresh_bot(tmp_path: Path, fake_llm: FakeOpenAI) -> AsyncIterator[BotProcess]:
    fake_llm.api_key = KEY  # the fake provider refuses any other key (401)
    process = BotProcess(
        tmp_path / "bot",
        env_overrides={
            "OPENAI_API_KEY": "",  # as .env.example ships them: empty = unset
            "OPENAI_BASE_URL": "",
            "SUPERUSERS": "[]",  # none: the one saved on the 模型 page applies after a restart
            "PALLAS_CONSOLE_TOKEN": TOKEN,
            "PALLAS_LLM_TIMEOUT_SECONDS": "3",
            "PALLAS_LLM_MAX_RETRIES": "0",
        },
    )
    await process.start()
    try:
        yield process
    finally:
        await process.stop()
        print(f"--- bot log (tail) ---\n{process.tail_log(80)}")


async def checklist(page: Any) -> dict[str, str]:
    items = await page.locator("#checklist li.check").all()
    return {await i.get_attribute("data-check"): await i.get_attribute("data-ok") for i in items}


async def fill_model(page: Any, base_url: str, key: str) -> None:
    await page.click('#presets a[data-preset="deepseek"]')
    await page.wait_for_selector("#preset-note")
    assert await page.input_value("#f-base-url") == "https://api.deepseek.com/v1"
    assert await page.input_value("#f-chat") == "deepseek-chat"
    await page.fill("#f-base-url", base_url)
    await page.fill("#f-api-key", key)


async def probe(page: Any) -> tuple[str, str]:
    await page.evaluate("document.getElementById('probe').innerHTML = ''")
    await page.click("#model-test")
    result = page.locator("#probe-result")
    await result.wait_for()
    return str(await result.get_attribute("data-ok")), await result.inner_text()


async def test_from_make_run_to_an_answer_without_opening_a_file(
    fresh_bot: BotProcess, fake_llm: FakeOpenAI
) -> None:
    base = f"http://127.0.0.1:{fresh_bot.port}/console"
    shots = artifacts_dir("first-run")
    async with browser() as chromium:
        context = await cast(Any, chromium).new_context(viewport=LAPTOP, locale="zh-CN")
        page = await context.new_page()
        await page.goto(f"{base}/login")
        await page.fill("input[name=token]", TOKEN)
        await page.click("button[type=submit]")
        await page.goto(f"{base}/status")

        # fresh: replies off, said first; every item red with its action
        assert "回复已关闭" in await page.inner_text("#replies")
        assert await checklist(page) == {"model": "no", "account": "no", "superuser": "no",
                                         "token": "yes", "group": "no"}  # fmt: skip
        account = await page.inner_text('li[data-check="account"]')
        assert fresh_bot.ws_url.split("?")[0].startswith("ws://127.0.0.1:")
        assert "/onebot/v11/ws" in account and "ONEBOT_ACCESS_TOKEN" in account
        assert fresh_bot.access_token not in account  # named, never shown back
        assert "NapCat" in account and "Lagrange.OneBot" in account and "LLOneBot" in account
        await page.locator("#checklist").screenshot(path=str(shots / "checklist-fresh.png"))

        # an account connects and a member @s the bot: recorded, no answer (no key)
        peer = OneBotPeer(fresh_bot.ws_url, self_id=BOT_ID, access_token=fresh_bot.access_token)
        await peer.connect()
        try:
            await peer.send_event(peer.group_message(GROUP, MEMBER, at_bot("在吗？")))
            await asyncio.sleep(1.0)
            assert peer.sends(GROUP) == [] and fake_llm.chat_requests() == []
            await page.goto(f"{base}/status")
            state = await checklist(page)
            assert state["account"] == "yes" and state["group"] == "yes" and state["model"] == "no"
            await page.locator("#checklist").screenshot(path=str(shots / "checklist-connected.png"))

            # the model page: a preset, a wrong key (refused, in Chinese), then the right one
            await page.click('nav a[href$="/model"]')
            assert "回复已关闭" in await page.inner_text("#model-replies")
            await fill_model(page, fake_llm.base_url, "sk-wrong-key-0000")
            ok, said = await probe(page)
            assert ok == "no" and "API Key 被拒绝（HTTP 401）" in said, said
            await page.fill("#f-api-key", KEY)
            ok, said = await probe(page)
            assert ok == "yes" and re.search(r"deepseek-chat 在 \d+ 毫秒内回答了", said), said
            await page.locator("#setup").screenshot(path=str(shots / "model-tested.png"))
            await page.click("#model-save")
            await page.wait_for_selector("#model-notice")
            assert "立即生效" in await page.inner_text("#model-notice")
            assert "回复已开启" in await page.inner_text("#model-replies")
            assert KEY not in await page.content() and "…49ab" in await page.content()
            await page.screenshot(path=str(shots / "model-saved.png"), full_page=True)

            # the next @ is answered by the same process: no restart
            before = len(fake_llm.chat_requests())
            await peer.send_event(peer.group_message(GROUP, MEMBER, at_bot("现在呢？")))
            sends = await peer.wait_for_calls("send_group_msg", timeout=15)
            assert sent_texts(sends) and fresh_bot.proc is not None
            assert fresh_bot.proc.poll() is None, "the bot was not restarted"
            request = fake_llm.chat_requests()[-1]
            assert len(fake_llm.chat_requests()) > before
            assert request.headers["authorization"] == f"Bearer {KEY}"
            assert request.body["model"] == "deepseek-chat"

            await page.goto(f"{base}/status")
            assert "回复已开启" in await page.inner_text("#replies")
            assert (await checklist(page)).get("model") == "yes"
            await page.locator("#checklist").screenshot(path=str(shots / "checklist-after.png"))
        finally:
            with contextlib.suppress(Exception):
                await peer.close()

        # the phone: the refusal reads the same, and no page is wider than the screen
        await page.set_viewport_size(PHONE)
        await page.goto(f"{base}/model")
        await fill_model(page, fake_llm.base_url, "sk-wrong-key-1111")
        ok, said = await probe(page)
        assert ok == "no" and "API Key 被拒绝" in said
        for name in ("model", "status"):
            await page.goto(f"{base}/{name}")
            await page.screenshot(path=str(shots / f"{name}-phone.png"), full_page=True)
            width = await page.evaluate("document.documentElement.scrollWidth")
            assert width <= PHONE["width"], f"{name} overflows a phone screen: {width}px"
        await page.set_viewport_size(LAPTOP)
        await page.goto(f"{base}/status")
        await page.screenshot(path=str(shots / "status-laptop.png"), full_page=True)

        # the superuser, saved on the same page, applies at the next start (NoneBot reads it once)
        await page.goto(f"{base}/model")
        await page.fill("#f-superusers", "10001")
        await page.click("#superusers-form button[type=submit]")
        assert "重启机器人后生效" in await page.inner_text("#model-notice")
        await fresh_bot.stop()
        await fresh_bot.start()
        await page.goto(f"{base}/login")
        await page.fill("input[name=token]", TOKEN)
        await page.click("button[type=submit]")
        await page.goto(f"{base}/status")
        assert (await checklist(page)).get("superuser") == "yes"
        assert "回复已开启" in await page.inner_text("#replies"), "the saved model survives too"
        await context.close()
    saved = fresh_bot.workdir / "secrets.toml"
    assert saved.stat().st_mode & 0o777 == 0o600 and KEY in saved.read_text(encoding="utf-8")
    assert "console: model settings saved" in fresh_bot.log_text()
    assert KEY not in fresh_bot.log_text(), "the key never reaches the log"
