"""Two QQ accounts of one deployment in one group, on one bot process (issue #30, part 2).

Two OneBot peers connect to the same bot with different self ids and both receive every group
line, each with its own message id (as QQ hands them out per account). The group sees: each
line stored once (two identical lines in one second stay two), an @ answered by the account it
names and only by it, an alias both accounts answer to answered once, and one account's reply
shown to the other account's model as another bot's line, never as a member's.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.e2e.conftest import BOT_ID, DbView, sent_texts
from tests.harness.bot_process import BotProcess
from tests.harness.fake_openai import FakeOpenAI, RecordedRequest
from tests.harness.onebot_peer import OneBotPeer

pytestmark = pytest.mark.e2e
SHARED_BOT = True  # one bot (both accounts) for the module; each test talks in its own group

ALICE, BOB = 54_001, 54_002
ACCOUNT_A, ACCOUNT_B = BOT_ID, BOT_ID + 1
B_IDS = 500_000  # account B's message ids: A's id + this (ids are per account)


def at(account: int, text: str) -> list[dict[str, Any]]:
    return [
        {"type": "at", "data": {"qq": str(account)}},
        {"type": "text", "data": {"text": " " + text}},
    ]


@dataclass
class TwoAccounts:
    a: OneBotPeer
    b: OneBotPeer
    group: int

    async def line(
        self, user: int, message: str | list[dict[str, Any]], message_id: int, *, time_: int
    ) -> None:
        """One group line as both accounts receive it: same time and content, own ids."""
        event_a = self.a.group_message(
            self.group, user, message, message_id=message_id, time_=time_, card=f"m{user}"
        )
        event_b = self.b.group_message(
            self.group, user, message, message_id=message_id + B_IDS, time_=time_, card=f"m{user}"
        )
        await asyncio.gather(self.a.send_event(event_a), self.b.send_event(event_b))


@pytest.fixture
async def accounts(bot: BotProcess, group: int) -> AsyncIterator[TwoAccounts]:
    a = OneBotPeer(bot.ws_url, self_id=ACCOUNT_A, access_token=bot.access_token)
    b = OneBotPeer(bot.ws_url, self_id=ACCOUNT_B, access_token=bot.access_token)
    await a.connect()
    await b.connect()
    await asyncio.sleep(0.3)  # both accounts noted as connected
    yield TwoAccounts(a, b, group)
    await a.close()
    await b.close()


async def _quiet(seconds: float) -> None:
    await asyncio.sleep(seconds)


async def test_each_line_is_stored_once_and_identical_lines_stay_two(
    accounts: TwoAccounts, db: DbView
) -> None:
    now = accounts.a.now()
    await accounts.line(ALICE, "今天食堂的饭真不错", 8001, time_=now)
    await accounts.line(BOB, "+1", 8002, time_=now)
    await accounts.line(BOB, "+1", 8003, time_=now)  # the same line again in the same second
    await accounts.line(ALICE, "明天见", 8004, time_=now + 1)
    await db.wait_for_count(4, group_id=accounts.group)
    await _quiet(1.5)  # anything else the writer had would be stored by now
    rows = await db.messages.recent(ACCOUNT_B, accounts.group, limit=20)
    assert [r.text for r in rows] == ["今天食堂的饭真不错", "+1", "+1", "明天见"]
    assert await db.messages.count(group_id=accounts.group) == 4


@pytest.mark.parametrize(
    "message",
    [
        at(ACCOUNT_B, "帕拉斯你在吗？"),
        # the alias names both accounts, the @ only B: B answers
        [{"type": "text", "data": {"text": "牛牛 "}}, *at(ACCOUNT_B, "你在吗？")],
    ],
    ids=["at-b", "alias-and-at-b"],
)
async def test_an_at_is_answered_by_the_named_account_only(
    accounts: TwoAccounts, fake_llm: FakeOpenAI, message: list[dict[str, Any]]
) -> None:
    fake_llm.enqueue("我在的呀", "我也在")
    await accounts.line(ALICE, message, 8101, time_=accounts.a.now())
    await accounts.b.wait_for_calls("send_group_msg")
    await _quiet(2.5)
    assert sent_texts(accounts.b.sends(accounts.group)) == ["我在的呀"]
    assert accounts.a.sends(accounts.group) == []
    assert len(fake_llm.chat_requests()) == 1


async def test_an_alias_both_accounts_answer_to_is_answered_once(
    accounts: TwoAccounts, fake_llm: FakeOpenAI
) -> None:
    fake_llm.enqueue("在呢在呢", "我也在")
    await accounts.line(ALICE, "牛牛你们在吗？", 8201, time_=accounts.a.now())
    await fake_llm.wait_for_requests(1)
    await _quiet(3.0)
    assert len(fake_llm.chat_requests()) == 1
    sends = [*accounts.a.sends(accounts.group), *accounts.b.sends(accounts.group)]
    assert sent_texts(sends) == ["在呢在呢"]


async def _request_with(fake_llm: FakeOpenAI, text: str) -> RecordedRequest:
    for _ in range(200):
        for request in fake_llm.chat_requests():
            if text in str(request.messages[-1].get("content", "")):
                return request
        await asyncio.sleep(0.05)
    raise TimeoutError(f"no chat request carrying {text!r}")


async def test_one_accounts_reply_is_another_bots_line_for_the_other(
    accounts: TwoAccounts, fake_llm: FakeOpenAI
) -> None:
    fake_llm.enqueue("周六下午三点集合", "对的就是周六")
    await accounts.line(ALICE, at(ACCOUNT_A, "活动是哪天？"), 8301, time_=accounts.a.now())
    sent = await accounts.a.wait_for_calls("send_group_msg")
    # account B receives A's reply as a group line from user A (as QQ delivers it)
    await accounts.b.send_event(
        accounts.b.group_message(
            accounts.group, ACCOUNT_A, sent_texts(sent)[0], message_id=9_300_001, nickname="帕拉斯"
        )
    )
    await _quiet(3.5)  # past the group cooldown
    await accounts.line(BOB, at(ACCOUNT_B, "是周六吗？"), 8302, time_=accounts.a.now())
    request = await _request_with(fake_llm, "是周六吗")
    prompt = "\n".join(str(m.get("content", "")) for m in request.messages)
    lines = [line for line in prompt.splitlines() if "周六下午三点集合" in line]
    assert lines, prompt
    assert all("别的牛" in line for line in lines), lines
    assert len(fake_llm.chat_requests()) == 2  # A's reply line itself was never answered
