"""Tool turns as the group sees them: the true result reaches the model, closed tools stay shut."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator

import pytest

from tests.e2e.conftest import DbView, at_bot, sent_texts, write_group_config
from tests.harness.bot_process import BotProcess
from tests.harness.fake_openai import FakeOpenAI
from tests.harness.onebot_peer import OneBotPeer

pytestmark = pytest.mark.e2e
SHARED_BOT = True  # one bot for the module; each test talks in its own groups

ALICE, BOB, CAROL = 61_001, 61_002, 61_003
SUPERUSER = 10_001


def _tool_block(system_prompt: str) -> str:
    assert "【工具上下文】" in system_prompt, system_prompt[-600:]
    return system_prompt.split("【工具上下文】", 1)[1]


async def test_dice_request_puts_the_real_roll_in_the_prompt(
    group: int, peer: OneBotPeer, fake_llm: FakeOpenAI
) -> None:
    fake_llm.enqueue("掷出来啦\n看看你的运气")
    await peer.send_event(peer.group_message(group, ALICE, at_bot("帮我掷个 2d6")))
    sends = await peer.wait_for_calls("send_group_msg", count=2)
    assert sent_texts(sends) == ["掷出来啦", "看看你的运气"]
    request = fake_llm.chat_requests()[0]
    block = _tool_block(request.system_prompt)
    rolled = re.search(r"(\d+) \+ (\d+) = (\d+)", block)
    assert rolled is not None, block
    first, second, total = (int(g) for g in rolled.groups())
    assert 1 <= first <= 6 and 1 <= second <= 6 and first + second == total
    assert len(fake_llm.chat_requests()) == 1  # the tool is local: still one LLM call


async def test_calc_result_is_exact_and_ordinary_chat_runs_no_tool(
    group: int, peer: OneBotPeer, fake_llm: FakeOpenAI
) -> None:
    fake_llm.enqueue("是413", "不会呀")
    await peer.send_event(peer.group_message(group, ALICE, at_bot("算一下 12*34+5")))
    await peer.wait_for_calls("send_group_msg", count=1)
    assert "413" in _tool_block(fake_llm.chat_requests()[0].system_prompt)
    await asyncio.sleep(3.5)  # past the group chat cooldown
    await peer.send_event(peer.group_message(group, BOB, at_bot("你会算数吗")))
    await peer.wait_for_calls("send_group_msg", count=2)
    assert "【工具上下文】" not in fake_llm.chat_requests()[1].system_prompt


async def test_tool_closed_in_a_group_is_refused_honestly(
    group: int, bot: BotProcess, peer: OneBotPeer, fake_llm: FakeOpenAI
) -> None:
    write_group_config(bot, group, '[tools]\nallowed = ["dice"]\n')
    fake_llm.enqueue("这个我这里算不了哦")
    await peer.send_event(peer.group_message(group, ALICE, at_bot("计算 (3+4)*6")))
    await peer.wait_for_calls("send_group_msg", count=1)
    block = _tool_block(fake_llm.chat_requests()[0].system_prompt)
    assert "没有开放" in block and "42" not in block

    await asyncio.sleep(0.5)
    await peer.send_event(peer.group_message(group, SUPERUSER, "/pallas context"))
    await peer.send_event(peer.group_message(group, SUPERUSER, "/pallas status"))
    answers = sent_texts(await peer.wait_for_calls("send_msg", "send_group_msg", count=3))
    assert any("tool: calc" in a and "permitted=False (not_allowed)" in a for a in answers)
    assert any("工具：dice" in a for a in answers)  # only the allowed tool is listed


async def test_admin_only_activity_ranking_counts_this_group_only(
    group: int,
    group_ids: Iterator[int],
    bot: BotProcess,
    peer: OneBotPeer,
    fake_llm: FakeOpenAI,
    db: DbView,
) -> None:
    write_group_config(bot, group, '[tools]\nadmin_only = ["activity"]\n')
    other_group = next(group_ids)
    for n, (where, user, card) in enumerate(
        [(group, BOB, "博士"), (group, BOB, "博士"), (group, CAROL, "凯尔希")]
        + [(other_group, CAROL, "凯尔希")] * 5
    ):
        event = peer.group_message(where, user, f"随便聊聊第{n}句话", card=card)
        await peer.send_event(event)
    await db.wait_for_count(3, group_id=group)

    fake_llm.enqueue("这个只有管理员能看哦", "博士话最多")
    await peer.send_event(peer.group_message(group, ALICE, at_bot("今天谁最活跃")))
    await peer.wait_for_calls("send_group_msg", count=1)
    refused = _tool_block(fake_llm.chat_requests()[0].system_prompt)
    assert "没有开放" in refused and "博士" not in refused

    await asyncio.sleep(3.5)
    await peer.send_event(
        peer.group_message(group, ALICE, at_bot("今天谁最活跃"), role="admin", card="阿米娅")
    )
    await peer.wait_for_calls("send_group_msg", count=2)
    ranking = _tool_block(fake_llm.chat_requests()[1].system_prompt)
    assert "博士 2 条" in ranking and "凯尔希 1 条" in ranking, ranking  # not the other group's 5
