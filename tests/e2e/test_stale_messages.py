"""After a reconnect the backlog is recorded, and only the latest @ gets one short reply."""

from __future__ import annotations

import asyncio
import time

import pytest

from tests.e2e.conftest import DbView, at_bot, sent_texts
from tests.harness.fake_openai import FakeOpenAI
from tests.harness.onebot_peer import OneBotPeer

pytestmark = pytest.mark.e2e
SHARED_BOT = True  # one bot for the module; each test talks in its own `group`

SUPERUSER, ALICE, BOB = 10001, 46_101, 46_102


async def test_backlog_after_reconnect(
    group: int, peer: OneBotPeer, fake_llm: FakeOpenAI, db: DbView
) -> None:
    fake_llm.enqueue("刚才掉线了，今晚八点哦\n你还想问什么")
    now = int(time.time())
    backlog = [
        peer.group_message(group, ALICE, at_bot("在吗"), time_=now - 600),
        peer.group_message(group, BOB, "有人知道今晚几点开始吗", time_=now - 590),
        peer.group_message(group, ALICE, at_bot("你怎么不理我"), time_=now - 500),
        peer.group_message(group, ALICE, at_bot("今晚活动几点开始？"), time_=now - 400),
    ]
    for event in backlog:  # the implementation flushes its queue at once
        await peer.send_event(event)
    await peer.wait_for_calls("send_group_msg")
    await asyncio.sleep(2.0)

    [request] = fake_llm.chat_requests()  # one turn for the whole backlog
    current = str(request.messages[-1]["content"])
    assert "今晚活动几点开始" in current and "你怎么不理我" not in current
    [reply] = sent_texts(peer.sends(group))  # one bubble
    assert reply.startswith("刚才掉线了，今晚八点哦")
    assert "最多 1 段" in request.system_prompt  # the short shape was asked for
    await db.wait_for_count(4, group_id=group)  # everything was recorded

    await peer.send_event(peer.group_message(group, SUPERUSER, "/pallas why 10"))
    sends = await peer.wait_for_calls("send_msg", "send_group_msg", count=2)
    why = sent_texts(sends)[-1]
    assert "stale_superseded" in why and "stale_message" in why


async def test_fresh_at_after_the_backlog_is_answered_normally(
    group: int, peer: OneBotPeer, fake_llm: FakeOpenAI
) -> None:
    fake_llm.enqueue("在的")
    await peer.send_event(
        peer.group_message(group, BOB, at_bot("昨天说的事呢"), time_=int(time.time()) - 900)
    )
    await peer.send_event(peer.group_message(group, BOB, at_bot("帕拉斯在吗？")))
    await peer.wait_for_calls("send_group_msg")
    await asyncio.sleep(1.5)
    [request] = fake_llm.chat_requests()
    assert "帕拉斯在吗" in str(request.messages[-1]["content"])
    assert "昨天说的事" not in str(request.messages[-1]["content"])
