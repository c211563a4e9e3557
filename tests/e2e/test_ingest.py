"""One entry for group messages, addressed messages first (issue 14).

The real bot and the OneBot peer over the real WebSocket: a burst of unaddressed chatter with
an @ in the middle — the @ is answered exactly once and every message is stored; admin and
member memory commands still work through the one NoneBot entry (and never reach the chat);
the bot logs its periodic `counters:` line instead of a route line per skipped message.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from pallas.features.memory_commands.member_commands import REPLY_TAUGHT
from tests.e2e.conftest import BOT_ID, DbView, at_bot, sent_texts
from tests.harness.bot_process import BotProcess
from tests.harness.fake_openai import FakeOpenAI
from tests.harness.onebot_peer import OneBotPeer

pytestmark = pytest.mark.e2e

BURST_GROUPS = [66_000_001 + g for g in range(8)]
AT_GROUP = 66_100_001
SUPERUSER, MEMBER = 10001, 52_001
REFUSED = "只有群主、管理员或超级用户可以用这个命令哦"
COUNTERS = re.compile(r"counters: in (\d+) \(\+\d+\), routed (\d+), replies (\d+)")


@pytest.fixture
async def counting_bot(tmp_path: Path, fake_llm: FakeOpenAI) -> AsyncIterator[BotProcess]:
    process = BotProcess(
        tmp_path / "bot",
        env_overrides={
            "OPENAI_BASE_URL": fake_llm.base_url,
            "PALLAS_LLM_MAX_RETRIES": "0",
            "PALLAS_COUNTERS_INTERVAL_S": "0.5",
        },
    )
    await process.start()
    yield process
    await process.stop()
    print(f"--- bot log (tail) ---\n{process.tail_log(80)}")


@pytest.fixture
async def client(counting_bot: BotProcess) -> AsyncIterator[OneBotPeer]:
    peer = OneBotPeer(counting_bot.ws_url, self_id=BOT_ID, access_token=counting_bot.access_token)
    await peer.connect()
    yield peer
    await peer.close()


def _last_counters(bot: BotProcess) -> tuple[int, int, int]:
    found = COUNTERS.findall(bot.log_text())
    return tuple(int(n) for n in found[-1]) if found else (0, 0, 0)  # type: ignore[return-value]


async def _wait_routed(bot: BotProcess, count: int, timeout: float = 60.0) -> None:
    async def routed() -> None:
        while _last_counters(bot)[1] < count:
            await asyncio.sleep(0.1)

    await asyncio.wait_for(routed(), timeout)


async def test_an_at_inside_a_burst_is_answered_once_and_everything_is_stored(
    counting_bot: BotProcess, client: OneBotPeer, fake_llm: FakeOpenAI
) -> None:
    fake_llm.enqueue("在的在的")
    burst = [
        client.group_message(BURST_GROUPS[i % len(BURST_GROUPS)], 53_000 + i % 17, f"闲聊{i}")
        for i in range(400)
    ]
    burst.insert(200, client.group_message(AT_GROUP, MEMBER, at_bot("在吗？帮我看看")))
    for event in burst:
        await client.send_event(event)

    await client.wait_for_calls("send_group_msg", timeout=60)
    await _wait_routed(counting_bot, len(burst))
    await asyncio.sleep(1.5)  # a duplicate answer would arrive here
    assert sent_texts(client.sends(AT_GROUP)) == ["在的在的"]
    assert all(client.sends(group) == [] for group in BURST_GROUPS)
    asked = [r for r in fake_llm.chat_requests() if "帮我看看" in str(r.messages[-1:])]
    assert len(asked) == 1
    view = DbView(counting_bot.database_url)
    try:
        await view.wait_for_count(len(burst))
        assert await view.messages.count(group_id=AT_GROUP) >= 1
    finally:
        await view.engine.dispose()
    messages, routed, replies = _last_counters(counting_bot)
    assert messages == routed == len(burst) and replies == 1
    log = counting_bot.log_text()
    routes = [line for line in log.splitlines() if "pallas | route {" in line]
    assert not [r for r in routes if "闲聊" in r], "skipped messages: no route line each at INFO"
    assert '"outcome": "reply"' in log, "a decision that calls the model still is"


async def test_admin_and_memory_commands_work_through_the_one_entry(
    counting_bot: BotProcess, client: OneBotPeer, fake_llm: FakeOpenAI
) -> None:
    group = BURST_GROUPS[0]
    await client.send_event(client.group_message(group, SUPERUSER, "/pallas status"))
    await client.wait_for_calls("send_msg", "send_group_msg", timeout=20)
    await client.send_event(client.group_message(group, MEMBER, "/pallas status"))
    await client.wait_for_calls("send_msg", "send_group_msg", count=2, timeout=20)
    await client.send_event(client.group_message(group, MEMBER, at_bot("记住 我喜欢猫")))
    await client.wait_for_calls("send_msg", "send_group_msg", count=3, timeout=20)
    texts = sent_texts(client.sends(group))
    assert texts[1:] == [REFUSED, REPLY_TAUGHT]
    assert texts[0] and texts[0] != REFUSED  # the status report
    assert fake_llm.chat_requests() == [], "commands never reach the chat"
    await asyncio.sleep(1.0)  # the counters line after the last command
    messages, routed, _ = _last_counters(counting_bot)
    assert (messages, routed) == (3, 0)
    assert "stopped {'pallas_admin': 2, 'memory_commands': 1}" in counting_bot.log_text()
