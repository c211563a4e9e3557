"""A complete @ question goes to the model at once; an unfinished one still gets the window."""

from __future__ import annotations

import asyncio

import pytest

from tests.e2e.conftest import BOT_ID, DbView, at_bot, sent_texts, write_group_config
from tests.harness.bot_process import BotProcess
from tests.harness.fake_openai import FakeOpenAI, RecordedRequest, Scripted
from tests.harness.onebot_peer import OneBotPeer

pytestmark = pytest.mark.e2e
SHARED_BOT = True  # one bot for the module; each test talks in its own groups

ALICE, BOB = 46_001, 46_002
WINDOW = "[chat]\nmerge_window_s = 1.2\n"


def _user_text(request: RecordedRequest) -> str:
    content = request.messages[-1]["content"]
    return content if isinstance(content, str) else str(content)


async def test_complete_question_is_asked_before_the_next_line_arrives(
    group: int, bot: BotProcess, peer: OneBotPeer, fake_llm: FakeOpenAI, db: DbView
) -> None:
    write_group_config(bot, group, WINDOW)
    fake_llm.enqueue(Scripted(text="明天是晴天哦", delay=1.0))
    await peer.send_event(peer.group_message(group, ALICE, at_bot("明天天气怎么样？")))
    await asyncio.sleep(0.6)  # half the merge window
    await peer.send_event(peer.group_message(group, ALICE, "我在上海"))
    await peer.wait_for_calls("send_group_msg")
    await asyncio.sleep(1.5)
    [request] = fake_llm.chat_requests()
    # built before the second line existed: no window was waited
    assert "明天天气怎么样" in _user_text(request) and "我在上海" not in _user_text(request)
    assert sent_texts(peer.sends(group)) == ["明天是晴天哦"]

    async def late_line_in_session() -> bool:
        rows = await db.chat_sessions.all_for_user(BOT_ID, group, ALICE)
        return any("我在上海" in r.content for r in rows if r.role == "user")

    # the line that came while the model answered belongs to the same session turn
    await db.wait_for(late_line_in_session, what="the late line in the session")


async def test_a_busy_members_complete_question_is_not_held(
    group: int, bot: BotProcess, peer: OneBotPeer, fake_llm: FakeOpenAI
) -> None:
    """Issue 32: she was chatting a second ago (a busy group); her @ question still goes at
    once, and another member's @ during the group's cooldown is answered during it."""
    # a long group cooldown: Bob's @ would wait 30 s if an @ were held by it
    write_group_config(bot, group, WINDOW + "[routing.cooldown]\nchat_cooldown_s = 30\n")
    fake_llm.enqueue(Scripted(text="多放点糖", delay=1.0), "好呀")
    await peer.send_event(peer.group_message(group, ALICE, "今晚打不打排位"))
    await asyncio.sleep(1.0)
    await peer.send_event(peer.group_message(group, ALICE, at_bot("番茄炒蛋怎么做才好吃？")))
    await asyncio.sleep(0.6)  # half the merge window
    await peer.send_event(peer.group_message(group, ALICE, "我妈说要放糖"))
    await peer.send_event(peer.group_message(group, BOB, at_bot("推荐一部好看的电影吧")))
    await peer.wait_for_calls("send_group_msg", count=2)
    first, second = fake_llm.chat_requests()[:2]
    assert "番茄炒蛋" in _user_text(first) and "我妈说要放糖" not in _user_text(first)
    assert "推荐一部好看的电影" in _user_text(second)


async def test_two_line_burst_still_gets_one_reply(
    group: int, bot: BotProcess, peer: OneBotPeer, fake_llm: FakeOpenAI
) -> None:
    write_group_config(bot, group, WINDOW)
    fake_llm.enqueue("明天多云，记得带伞")
    await peer.send_event(peer.group_message(group, ALICE, at_bot("我想问，")))
    await asyncio.sleep(0.4)
    await peer.send_event(peer.group_message(group, ALICE, "明天天气怎么样"))
    await peer.wait_for_calls("send_group_msg")
    await asyncio.sleep(2.0)
    [request] = fake_llm.chat_requests()
    assert "我想问" in _user_text(request) and "明天天气怎么样" in _user_text(request)
    assert sent_texts(peer.sends(group)) == ["明天多云，记得带伞"]


async def test_bare_address_waits_for_the_question(
    group: int, bot: BotProcess, peer: OneBotPeer, fake_llm: FakeOpenAI
) -> None:
    write_group_config(bot, group, WINDOW)
    fake_llm.enqueue("周六哦")
    await peer.send_event(
        peer.group_message(group, ALICE, [{"type": "at", "data": {"qq": str(BOT_ID)}}])
    )
    await asyncio.sleep(0.4)
    await peer.send_event(peer.group_message(group, ALICE, "下次活动是哪天"))
    await peer.wait_for_calls("send_group_msg")
    await asyncio.sleep(2.0)
    [request] = fake_llm.chat_requests()
    assert "下次活动是哪天" in _user_text(request)
    assert len(peer.sends(group)) == 1
