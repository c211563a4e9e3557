"""Providers as they really are (issue 29), through the real bot and a OneBot peer.

- The primary endpoint answers 500 for a while: every @ in that time is answered by the
  backup, the primary's breaker opens (it is not asked at all), `/pallas status` says so,
  and once the primary is back a probe closes the breaker; the usage page has a row for
  each endpoint.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import BOT_ID, at_bot, sent_texts
from tests.harness.bot_process import BotProcess
from tests.harness.fake_openai import FakeOpenAI, Scripted
from tests.harness.onebot_peer import OneBotPeer

pytestmark = pytest.mark.e2e

GROUP = 66_000_001
SUPERUSER = 10001
MEMBERS = (52_001, 52_002, 52_003, 52_004)
TOKEN = "providers-console-token"
OPEN_SECONDS = 4


@pytest.fixture
async def backup_llm() -> AsyncIterator[FakeOpenAI]:
    server = FakeOpenAI(default_reply="备用的我在")
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
async def chain_bot(
    tmp_path: Path, fake_llm: FakeOpenAI, backup_llm: FakeOpenAI
) -> AsyncIterator[BotProcess]:
    process = BotProcess(
        tmp_path / "bot",
        env_overrides={
            "OPENAI_BASE_URL": fake_llm.base_url,
            "PALLAS_LLM_TIMEOUT_SECONDS": "3",
            "PALLAS_LLM_MAX_RETRIES": "0",
            "PALLAS_CONSOLE_TOKEN": TOKEN,
            "BACKUP_LLM_KEY": "sk-backup",
        },
    )
    process.prepare()
    (process.config_dir / "providers.toml").write_text(
        f"""
[[chat]]
name = "backup"
base_url = "{backup_llm.base_url}"
api_key_env = "BACKUP_LLM_KEY"
model = "deepseek-chat"

[breaker]
failures = 2
open_seconds = {OPEN_SECONDS}
""",
        encoding="utf-8",
    )
    await process.start()
    yield process
    await process.stop()
    print(f"--- bot log (tail) ---\n{process.tail_log(80)}")


@pytest.fixture
async def chain_peer(chain_bot: BotProcess) -> AsyncIterator[OneBotPeer]:
    client = OneBotPeer(chain_bot.ws_url, self_id=BOT_ID, access_token=chain_bot.access_token)
    await client.connect()
    yield client
    await client.close()


def _carrying(llm: FakeOpenAI, text: str) -> int:
    return sum(1 for r in llm.chat_requests() if text in str(r.messages[-1].get("content")))


async def _ask(peer: OneBotPeer, member: int, text: str, sends: int) -> str:
    await peer.send_event(peer.group_message(GROUP, member, at_bot(text)))
    calls = await peer.wait_for_calls("send_group_msg", "send_msg", count=sends, timeout=20)
    return sent_texts(calls)[-1]


async def _status(peer: OneBotPeer, sends: int) -> str:
    await peer.send_event(peer.group_message(GROUP, SUPERUSER, "/pallas status"))
    calls = await peer.wait_for_calls("send_group_msg", "send_msg", count=sends, timeout=20)
    return sent_texts(calls)[-1]


async def test_the_backup_answers_while_the_primary_fails_then_the_breaker_closes(
    chain_bot: BotProcess, chain_peer: OneBotPeer, fake_llm: FakeOpenAI, backup_llm: FakeOpenAI
) -> None:
    fake_llm.enqueue(*[Scripted(status=500)] * 200)  # the primary is down
    sends = 0
    questions = ("帕拉斯在吗", "今天吃什么好", "推荐个电影呗")
    for member, question in zip(MEMBERS, questions, strict=False):
        sends += 1
        assert await _ask(chain_peer, member, question, sends) == "备用的我在"
        assert _carrying(backup_llm, question) == 1
    # two failures in a row opened the primary's breaker: the third @ never reached it
    assert [_carrying(fake_llm, q) for q in questions] == [1, 1, 0]
    sends += 1
    status = await _status(chain_peer, sends)
    opened = r"模型端点 chat：primary（gpt-4o-mini）熔断中（\d+ 秒后重试） → backup"
    assert re.search(opened, status)

    fake_llm.script.clear()  # the primary is back
    fake_llm.default_reply = "主模型回来了"
    await asyncio.sleep(OPEN_SECONDS + 0.5)
    sends += 1
    assert await _ask(chain_peer, MEMBERS[3], "你还在吗", sends) == "主模型回来了"  # the probe
    sends += 1
    status = await _status(chain_peer, sends)
    assert "primary（gpt-4o-mini）正常 → backup（deepseek-chat）正常" in status

    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{chain_bot.port}") as http:
        assert (await http.post("/console/login", data={"token": TOKEN})).status_code == 303
        page = (await http.get("/console/usage")).text
    table = page.split('id="usage"', 1)[1].split("</table>", 1)[0]
    assert re.search(r'data-label="模型"><code>deepseek-chat</code>.*?端点">backup<', table)
    assert re.search(r'data-label="模型"><code>gpt-4o-mini</code>.*?端点">primary<', table)
