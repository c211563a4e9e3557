"""Routing as the group sees it: answers real @s once, stays quiet at noise, merges bursts."""

from __future__ import annotations

import asyncio

import pytest

from tests.e2e.conftest import at_bot, sent_texts, write_group_config
from tests.harness.bot_process import BotProcess
from tests.harness.fake_openai import FakeOpenAI
from tests.harness.onebot_peer import OneBotPeer

pytestmark = pytest.mark.e2e
SHARED_BOT = True  # one bot for the module; each test talks in its own `group`

ALICE, BOB = 31_001, 31_002


async def _quiet_for(seconds: float) -> None:
    await asyncio.sleep(seconds)


async def test_at_question_gets_exactly_one_reply(
    group: int, peer: OneBotPeer, fake_llm: FakeOpenAI
) -> None:
    fake_llm.enqueue("在的在的\n有什么事呀")
    await peer.send_event(peer.group_message(group, ALICE, at_bot("帕拉斯你在吗？"), card="爱丽丝"))
    calls = await peer.wait_for_calls("send_group_msg", count=2)
    await _quiet_for(2.0)
    assert sent_texts(peer.sends(group)) == ["在的在的", "有什么事呀"]
    assert len(fake_llm.chat_requests()) == 1
    assert all(int(c.params["group_id"]) == group for c in calls)


@pytest.mark.parametrize(
    "message",
    [
        "哈哈哈哈",
        [{"type": "face", "data": {"id": "178"}}],
        [
            {"type": "at", "data": {"qq": str(BOB)}},
            {"type": "text", "data": {"text": " 你看这个怎么样"}},
        ],
        "666",
    ],
    ids=["laughter", "face", "at-someone-else", "666"],
)
async def test_noise_and_bystander_messages_cost_no_llm_call(
    group: int, peer: OneBotPeer, fake_llm: FakeOpenAI, message
) -> None:
    await peer.send_event(peer.group_message(group, ALICE, message))
    await _quiet_for(2.5)
    assert fake_llm.chat_requests() == []
    assert peer.sends(group) == []


async def test_two_quick_messages_from_one_member_get_one_reply(
    group: int, peer: OneBotPeer, fake_llm: FakeOpenAI
) -> None:
    fake_llm.enqueue("两个都可以呀")
    # an unfinished first line ("…") waits the merge window; a complete one would not
    await peer.send_event(peer.group_message(group, ALICE, at_bot("周末去爬山还是看电影…")))
    await asyncio.sleep(0.3)
    await peer.send_event(peer.group_message(group, ALICE, "我有点纠结，你帮我选一个"))
    await peer.wait_for_calls("send_group_msg")
    await _quiet_for(3.0)
    requests = fake_llm.chat_requests()
    assert len(requests) == 1 and len(peer.sends(group)) == 1
    last_user = requests[0].messages[-1]["content"]
    assert "周末去爬山还是看电影" in last_user and "帮我选一个" in last_user


async def test_quote_of_a_live_candidate_is_sent_as_a_reply_segment(
    group: int, bot: BotProcess, peer: OneBotPeer, fake_llm: FakeOpenAI
) -> None:
    write_group_config(bot, group, "[routing.quote]\nprobability = 1.0\ncooldown_s = 120\n")
    fake_llm.enqueue("是周六哦", "还是周六", "周六没变")
    question = peer.group_message(group, ALICE, at_bot("下次活动是哪天？"), message_id=7001)
    await peer.send_event(question)
    await peer.wait_for_calls("send_group_msg", count=1)
    await asyncio.sleep(3.5)  # past the group chat cooldown

    quoting = [{"type": "reply", "data": {"id": "7001"}}, *at_bot("确定是这天吗")]
    await peer.send_event(peer.group_message(group, BOB, quoting, message_id=7002))
    sends = await peer.wait_for_calls("send_group_msg", count=2)
    first_segment = sends[1].params["message"][0]
    assert first_segment == {"type": "reply", "data": {"id": "7001"}}

    await asyncio.sleep(3.5)
    again = [{"type": "reply", "data": {"id": "7001"}}, *at_bot("真的吗")]
    await peer.send_event(peer.group_message(group, ALICE, again, message_id=7003))
    sends = await peer.wait_for_calls("send_group_msg", count=3)
    assert all(s["type"] != "reply" for s in sends[2].params["message"])  # quote cooldown


async def test_quote_never_sent_when_probability_is_zero(
    group: int, bot: BotProcess, peer: OneBotPeer, fake_llm: FakeOpenAI
) -> None:
    write_group_config(bot, group, "[routing.quote]\nprobability = 0.0\n")
    await peer.send_event(peer.group_message(group, ALICE, at_bot("几点开会？"), message_id=8001))
    await peer.wait_for_calls("send_group_msg", count=1)
    await asyncio.sleep(3.5)
    quoting = [{"type": "reply", "data": {"id": "8001"}}, *at_bot("改时间了吗")]
    await peer.send_event(peer.group_message(group, BOB, quoting, message_id=8002))
    sends = await peer.wait_for_calls("send_group_msg", count=2)
    assert all(s["type"] != "reply" for s in sends[1].params["message"])


async def test_pass_turn_sends_one_short_local_phrase_without_llm(
    group: int, bot: BotProcess, peer: OneBotPeer, fake_llm: FakeOpenAI
) -> None:
    write_group_config(bot, group, "[routing.low_engagement]\nprobability_steps = [[0, 1.0]]\n")
    fake_llm.enqueue("早呀")
    await peer.send_event(peer.group_message(group, ALICE, at_bot("早上好")))
    await peer.wait_for_calls("send_group_msg", count=1)
    await asyncio.sleep(3.5)
    # Not addressed, inside Alice's follow-up window, low-value venting: a rule PASS.
    await peer.send_event(peer.group_message(group, ALICE, "唉 好累"))
    sends = await peer.wait_for_calls("send_group_msg", count=2)
    await _quiet_for(2.0)
    phrase = sent_texts(sends)[1]
    assert 0 < len(phrase) <= 12
    assert len(fake_llm.chat_requests()) == 1
    assert len(peer.sends(group)) == 2


async def test_shut_up_silences_the_bot_but_an_at_still_gets_through(
    group: int, peer: OneBotPeer, fake_llm: FakeOpenAI
) -> None:
    await peer.send_event(peer.group_message(group, ALICE, at_bot("闭嘴")))
    await _quiet_for(2.0)
    assert fake_llm.chat_requests() == [] and peer.sends(group) == []
    fake_llm.enqueue("好啦我在")
    await peer.send_event(peer.group_message(group, BOB, at_bot("帕拉斯，明天几点集合？")))
    await peer.wait_for_calls("send_group_msg")
    assert len(fake_llm.chat_requests()) == 1


async def test_ambient_joins_unaddressed_chat_within_its_budget(
    group: int, bot: BotProcess, peer: OneBotPeer, fake_llm: FakeOpenAI
) -> None:
    config = "[routing.ambient]\nenabled = true\nrate = 1.0\nbudget = 1\ncooldown_s = 0\n"
    write_group_config(bot, group, config)
    fake_llm.enqueue("我选看电影")
    # issue 13: open questions the persona can answer ("大家周末去哪玩" asks members only)
    await peer.send_event(peer.group_message(group, ALICE, "周末去哪里玩，有什么推荐吗？"))
    await peer.wait_for_calls("send_group_msg", count=1)
    await asyncio.sleep(3.5)  # past the group chat cooldown
    await peer.send_event(peer.group_message(group, BOB, "最近有什么好看的电影推荐吗？"))
    await _quiet_for(3.0)
    assert sent_texts(peer.sends(group)) == ["我选看电影"]  # the budget allows one ambient turn
    assert len(fake_llm.chat_requests()) == 1
