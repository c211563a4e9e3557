"""Once the bot is up, its start-up heap is frozen (gc_tuning) and it answers as before."""

from __future__ import annotations

import asyncio

import pytest

from tests.e2e.conftest import at_bot
from tests.harness.bot_process import BotProcess
from tests.harness.fake_openai import FakeOpenAI
from tests.harness.onebot_peer import OneBotPeer

pytestmark = pytest.mark.e2e

GROUP, ALICE = 63_100_001, 41_501


async def test_start_up_heap_is_frozen_and_the_bot_still_answers(
    bot: BotProcess, peer: OneBotPeer, fake_llm: FakeOpenAI
) -> None:
    for _ in range(150):  # after the warm-ups (a few seconds at most)
        if "start-up objects frozen" in bot.tail_log(400):
            break
        await asyncio.sleep(0.1)
    assert "start-up objects frozen" in bot.tail_log(400)
    fake_llm.enqueue("在呢")
    await peer.send_event(peer.group_message(GROUP, ALICE, at_bot("帕拉斯在吗")))
    sends = await peer.wait_for_calls("send_group_msg", count=1)
    assert "在呢" in str(sends[0])
