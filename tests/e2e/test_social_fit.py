"""Social fit (issue 13) as a group sees it: with every die turned up in the group file, the bot
still says nothing to ads, member-to-member threads and questions only members can answer; good
news may get a 好耶-kind phrase, a question never gets a phrase; third-person mentions are not
addresses, a name-then-comma is."""

from __future__ import annotations

import asyncio

import pytest

from pallas.routing import phrases
from tests.e2e.conftest import at_bot, sent_texts, write_group_config
from tests.harness.bot_process import BotProcess
from tests.harness.fake_openai import FakeOpenAI
from tests.harness.onebot_peer import OneBotPeer

pytestmark = pytest.mark.e2e
SHARED_BOT = True  # one bot for the module; each test talks in its own groups

ALICE, BOB = 31_301, 31_302

DICE_UP = """
[routing.ambient]
enabled = true
rate = 1.0
cooldown_s = 0
budget = 100

[routing.low_engagement]
probability_steps = [[0, 1.0]]

[routing.social]
daily_unprompted_cap = 100
"""

AD = (
    "【招聘】杭州某科技公司招聘Python实习生\n岗位要求：\n1、计算机相关专业\n2、每周到岗4天\n"
    "简历投递：hr@xxtech.cn\n联系电话：13857162043"
)


def _at(user: int, text: str) -> list[dict]:
    return [
        {"type": "at", "data": {"qq": str(user)}},
        {"type": "text", "data": {"text": " " + text}},
    ]


async def _send_all(
    peer: OneBotPeer, group: int, messages: list[tuple[int, object]], gap: float
) -> None:
    for user, message in messages:
        await peer.send_event(peer.group_message(group, user, message))
        await asyncio.sleep(gap)


async def test_ad_thread_and_member_questions_get_no_llm_call_and_no_phrase(
    group: int, bot: BotProcess, peer: OneBotPeer, fake_llm: FakeOpenAI
) -> None:
    write_group_config(bot, group, DICE_UP)
    messages: list[tuple[int, object]] = [
        (BOB, AD),  # an ad with contacts, a list and an e-mail
        (ALICE, _at(BOB, "下午一起去交申请表")),  # to another member
        (BOB, "好 两点楼下见"),  # A, B, A: a two-person exchange
        (ALICE, "行 我带上笔"),
        (BOB, "大家8号有被扣款100元吗？"),  # only members can answer
        (ALICE, "导师申请表你们都送到E307了吗"),
        (BOB, "有人下午去图书馆吗"),
    ]
    await _send_all(peer, group, messages, 0.4)
    await asyncio.sleep(2.5)
    assert fake_llm.chat_requests() == []
    assert peer.sends(group) == []


async def test_good_news_may_get_a_good_news_phrase_and_a_question_never_a_phrase(
    group: int, bot: BotProcess, peer: OneBotPeer, fake_llm: FakeOpenAI
) -> None:
    write_group_config(bot, group, DICE_UP)
    await peer.send_event(peer.group_message(group, ALICE, "我六级过了"))
    sends = await peer.wait_for_calls("send_group_msg", count=1)
    assert sent_texts(sends)[0] in phrases.GOOD_NEWS_POOL
    await asyncio.sleep(0.5)
    for text in ("合成玉还剩多少", "不是笔试吧？", "你们几点下课"):
        await peer.send_event(peer.group_message(group, BOB, text))
        await asyncio.sleep(0.4)
    await asyncio.sleep(2.5)
    assert len(peer.sends(group)) == 1
    assert fake_llm.chat_requests() == []


async def test_third_person_mention_is_no_address_but_name_then_comma_is(
    group: int, peer: OneBotPeer, fake_llm: FakeOpenAI
) -> None:
    await peer.send_event(peer.group_message(group, ALICE, "牛牛也是干员吧"))
    await peer.send_event(peer.group_message(group, BOB, "问牛牛"))
    await asyncio.sleep(2.5)
    assert fake_llm.chat_requests() == [] and peer.sends(group) == []
    fake_llm.enqueue("是的 我是罗德岛的干员")
    await peer.send_event(peer.group_message(group, ALICE, "牛牛，你也是干员吗"))
    await peer.wait_for_calls("send_group_msg", count=1)
    assert len(fake_llm.chat_requests()) == 1
    fake_llm.enqueue("在呢")
    await peer.send_event(peer.group_message(group, BOB, at_bot("牛牛也是干员吧")))
    await peer.wait_for_calls("send_group_msg", count=2)
    assert len(fake_llm.chat_requests()) == 2
