"""An admin can always see why the bot did what it did."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import pytest

from tests.e2e.conftest import DbView, at_bot, sent_texts
from tests.harness.bot_process import REPO, BotProcess
from tests.harness.fake_openai import FakeOpenAI, Scripted
from tests.harness.onebot_peer import OneBotPeer

pytestmark = pytest.mark.e2e
SHARED_BOT = True  # one bot for the module; each test talks in its own groups

SUPERUSER, MEMBER = 10001, 51_001


async def test_why_explains_recent_decisions(
    group: int, peer: OneBotPeer, fake_llm: FakeOpenAI
) -> None:
    fake_llm.enqueue("在呢")
    await peer.send_event(peer.group_message(group, MEMBER, "哈哈哈哈"))
    await peer.send_event(peer.group_message(group, MEMBER, at_bot("帕拉斯在吗？")))
    await peer.wait_for_calls("send_group_msg")
    await peer.send_event(peer.group_message(group, SUPERUSER, "/pallas why 5"))
    sends = await peer.wait_for_calls("send_msg", "send_group_msg", count=2)
    answer = sent_texts(sends)[-1]
    assert "哈哈哈哈" in answer and "跳过" in answer and "noise" in answer
    assert "回复" in answer


async def test_why_shows_memory_commands_and_failed_turns(
    group: int, peer: OneBotPeer, fake_llm: FakeOpenAI
) -> None:
    """Issue 28: a turn handled before routing (记住 …) and a turn whose model call failed were
    invisible, or shown as a plain reply."""
    await peer.send_event(peer.group_message(group, MEMBER, at_bot("记住 我喜欢猫")))
    await peer.wait_for_calls("send_msg", "send_group_msg")
    fake_llm.enqueue(Scripted(status=500))
    await peer.send_event(peer.group_message(group, 51_003, at_bot("今天几号？")))
    await fake_llm.wait_for_requests(1)
    answer = ""
    for asked in range(2, 22):  # the failed turn's record lands once the client gives up
        await peer.send_event(peer.group_message(group, SUPERUSER, "/pallas why 5"))
        answer = sent_texts(await peer.wait_for_calls("send_msg", "send_group_msg", count=asked))[
            -1
        ]
        if "模型调用失败" in answer:
            break
        await asyncio.sleep(0.3)
    assert "记忆命令" in answer and "记住啦" in answer
    assert "模型调用失败" in answer and "server_error" in answer


async def test_context_command_and_cli_show_last_turn(
    group: int, bot: BotProcess, peer: OneBotPeer, fake_llm: FakeOpenAI, db: DbView
) -> None:
    fake_llm.enqueue("好的")
    await peer.send_event(peer.group_message(group, 51_002, "周末有人出去玩吗"))
    await peer.send_event(peer.group_message(group, MEMBER, at_bot("今天几号？")))
    await peer.wait_for_calls("send_group_msg")
    await db.wait_for_replies(group, MEMBER, 1)  # the turn's snapshot is saved before this
    await peer.send_event(peer.group_message(group, SUPERUSER, "/pallas context"))
    sends = await peer.wait_for_calls("send_msg", "send_group_msg", count=2)
    answer = sent_texts(sends)[-1]
    for section in ("guard", "persona", "group_timeline", "reply_shape", "turn_policy"):
        assert section in answer

    env = {**os.environ, "DATABASE_URL": bot.database_url}
    result = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "pallas.cli", "context", "--group", str(group)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "system sections:" in result.stdout and "今天几号" in result.stdout
    assert "outcome delivered" in result.stdout
