"""Addressed messages are read first, and that never stalls ingest (issue 14 item 2).

The real bot and the OneBot peer over the real WebSocket. While an @ prepares its model request
the bot stops parsing other events; these tests pin down what must still hold:

- a peer that never answers `get_msg` (NoneBot looks up the quoted message of every reply
  before handlers run) does not stall recording: every message of a burst full of replies is
  stored, and an @ after them is answered;
- an @ deep in a burst of other groups' chatter is read ahead of that chatter but after the
  lines its own group sent before it: it is answered exactly once, its model request sees the
  line just before it, and every message is stored.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.e2e.conftest import DbView, at_bot, sent_texts
from tests.harness.bot_process import BotProcess
from tests.harness.fake_openai import FakeOpenAI
from tests.harness.onebot_peer import OneBotPeer

pytestmark = pytest.mark.e2e
SHARED_BOT = True  # one bot for the module; each test talks in its own `group`

OTHERS = [67_000_101 + g for g in range(6)]
ASKER = 57_001


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "data": {"text": text}}


def _reply_to(message_id: int, text: str) -> list[dict[str, Any]]:
    return [{"type": "reply", "data": {"id": str(message_id)}}, _text(text)]


async def test_replies_whose_quoted_message_never_comes_do_not_stall_ingest(
    group: int, bot: BotProcess, peer: OneBotPeer, fake_llm: FakeOpenAI, db: DbView
) -> None:
    released = asyncio.Event()

    async def never_answered(params: dict[str, Any]) -> Any:
        await released.wait()  # until the test ends: NoneBot's get_msg waits for its timeout
        raise LookupError("gone")

    peer.handlers["get_msg"] = never_answered
    fake_llm.enqueue("在的")
    try:
        burst = []
        for i in range(120):
            text = f"接龙{i}"
            segments = _reply_to(9_000 + i, text) if i % 2 else [_text(text)]
            burst.append(peer.group_message(OTHERS[i % len(OTHERS)], 57_100 + i % 7, segments))
        burst.append(peer.group_message(group, ASKER, at_bot("还在吗")))
        for event in burst:
            await peer.send_event(event)
        await db.wait_for(
            lambda: _stored_at_least(db, len(burst)), timeout=20.0, what="the whole burst stored"
        )
        await peer.wait_for_calls("send_group_msg", "send_msg", timeout=20)
        assert sent_texts(peer.sends(group)) == ["在的"]
        assert all(peer.sends(group) == [] for group in OTHERS)
    finally:
        released.set()


async def _stored_at_least(db: DbView, count: int) -> bool:
    return await db.messages.count() >= count


async def test_an_at_deep_in_a_burst_is_read_after_its_own_groups_lines_and_answered_once(
    group: int, bot: BotProcess, peer: OneBotPeer, fake_llm: FakeOpenAI, db: DbView
) -> None:
    fake_llm.enqueue("蓝色的")
    events = [
        peer.group_message(OTHERS[i % len(OTHERS)], 57_200 + i % 11, f"闲聊{i}") for i in range(600)
    ]
    events.insert(100, peer.group_message(group, 57_300, "今天的暗号是蓝色海豚"))
    events.insert(590, peer.group_message(group, ASKER, at_bot("暗号是什么颜色")))
    for event in events:
        await peer.send_event(event)

    await peer.wait_for_calls("send_group_msg", "send_msg", timeout=30)
    await db.wait_for(lambda: _stored_at_least(db, len(events)), timeout=30.0, what="all stored")
    await asyncio.sleep(1.5)  # a duplicate answer would arrive here
    assert sent_texts(peer.sends(group)) == ["蓝色的"]
    assert all(peer.sends(group) == [] for group in OTHERS)
    asked = [r for r in fake_llm.chat_requests() if "暗号是什么颜色" in str(r.messages[-1:])]
    assert len(asked) == 1
    assert "蓝色海豚" in str(asked[0].messages), "its group's earlier line was read before it"
