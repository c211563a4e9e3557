"""Memory as members meet it: taught in one group, recalled days later there and only there,
gone after "forget me"; facts extracted in the background land in the person-facts block."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable

import pytest

from pallas.core.db.engine import create_engine, session_factory
from pallas.features.memory.repository import MemoryRepository
from tests.e2e.conftest import BOT_ID, at_bot, sent_texts, write_group_config
from tests.harness.bot_process import BotProcess
from tests.harness.fake_openai import FakeOpenAI, RecordedRequest
from tests.harness.onebot_peer import OneBotPeer

pytestmark = pytest.mark.e2e

GROUP_A, GROUP_B, GROUP_C = 65_000_001, 65_000_002, 65_000_003
ALICE, BOB, CAROL = 51_001, 51_002, 51_003
DAYS = 86_400
PERSON_FACTS = "【当前对话者的稳定偏好"
FILLER = [
    "今天好热",
    "晚饭吃啥",
    "刚下班",
    "这关好难",
    "有人开黑吗",
    "摸鱼中",
    "困死了",
    "周末去哪",
    # the cache layout's timeline reaches back up to twice its width (16 lines)
    "下雨了",
    "带伞了吗",
    "没带",
    "惨",
    "外卖到了",
    "吃饭去",
    "回来了",
    "继续摸鱼",
]


def person_facts_block(system_prompt: str) -> str:
    """The person-facts section of a system prompt ('' when absent)."""
    if PERSON_FACTS not in system_prompt:
        return ""
    return system_prompt.split(PERSON_FACTS, 1)[1].split("\n\n", 1)[0]


async def ask(
    peer: OneBotPeer, fake_llm: FakeOpenAI, group: int, user: int, text: str
) -> RecordedRequest:
    """@ the bot and return the chat request that carried this very message."""
    return await request_carrying(
        fake_llm, text, peer.send_event(peer.group_message(group, user, at_bot(text)))
    )


async def request_carrying(
    fake_llm: FakeOpenAI, text: str, send: Awaitable[object]
) -> RecordedRequest:
    """Await `send` (an event to the bot) and return the chat request whose user turn ends
    with `text`: the request that carried this very message."""
    seen = len(fake_llm.chat_requests())
    await send
    deadline = asyncio.get_running_loop().time() + 20
    while asyncio.get_running_loop().time() < deadline:
        for request in fake_llm.chat_requests()[seen:]:
            last = request.messages[-1] if request.messages else {}
            if last.get("role") == "user" and str(last.get("content", "")).rstrip().endswith(text):
                return request
        await asyncio.sleep(0.05)
    raise TimeoutError(f"no chat request for {text!r}")


async def wait_for_reply(peer: OneBotPeer, group: int, count: int) -> list[str]:
    for _ in range(200):
        if len(peer.sends(group)) >= count:
            return sent_texts(peer.sends(group))
        await asyncio.sleep(0.05)
    raise TimeoutError(f"expected {count} sends to {group}, saw {sent_texts(peer.sends(group))}")


@pytest.fixture
async def peer_a(bot: BotProcess) -> AsyncIterator[OneBotPeer]:
    client = OneBotPeer(bot.ws_url, self_id=BOT_ID, access_token=bot.access_token)
    await client.connect()
    yield client
    await client.close()


async def test_taught_fact_is_recalled_days_later_only_in_its_group_until_forgotten(
    bot: BotProcess, peer_a: OneBotPeer, fake_llm: FakeOpenAI
) -> None:
    await peer_a.send_event(peer_a.group_message(GROUP_A, ALICE, at_bot("记住 我喜欢猫")))
    assert await wait_for_reply(peer_a, GROUP_A, 1) == ["记住啦～"]
    assert fake_llm.chat_requests() == [], "a memory command costs no LLM call"
    for i, text in enumerate(FILLER):  # days of chatter push the teaching out of the timeline
        await peer_a.send_event(peer_a.group_message(GROUP_A, BOB + i % 2, text))
    await asyncio.sleep(0.5)
    await peer_a.close()
    await bot.stop()

    later = BotProcess(
        bot.workdir,
        env_overrides={**bot.env_overrides, "PALLAS_CLOCK_OFFSET_SECONDS": str(5 * DAYS)},
    )
    await later.start()
    peer = OneBotPeer(
        later.ws_url, self_id=BOT_ID, access_token=later.access_token, clock_offset_s=5 * DAYS
    )
    await peer.connect()
    try:
        in_a = await ask(peer, fake_llm, GROUP_A, ALICE, "我喜欢什么动物来着？")
        assert "TA喜欢猫" in person_facts_block(in_a.system_prompt)
        assert "记住 我喜欢猫" not in in_a.system_prompt, "recalled from memory, not the timeline"

        in_b = await ask(peer, fake_llm, GROUP_B, ALICE, "我喜欢什么动物来着？")
        assert "喜欢猫" not in in_b.system_prompt

        sends_before = len(peer.sends(GROUP_A))
        await peer.send_event(peer.group_message(GROUP_A, ALICE, at_bot("忘记我")))
        replies = await wait_for_reply(peer, GROUP_A, sends_before + 1)
        assert "忘掉" in replies[-1]

        again = await ask(peer, fake_llm, GROUP_A, ALICE, "那我喜欢什么动物？")
        assert "喜欢猫" not in again.system_prompt
        assert person_facts_block(again.system_prompt) == ""
    finally:
        await peer.close()
        await later.stop()
        print(f"--- restarted bot log (tail) ---\n{later.tail_log(60)}")


async def test_extracted_fact_reaches_the_person_facts_block(
    bot: BotProcess, peer_a: OneBotPeer, fake_llm: FakeOpenAI
) -> None:
    write_group_config(bot, GROUP_C, "[memory.extraction]\nevery_n_turns = 1\n")
    extraction = {
        "facts": [
            {"subject": "u1", "kind": "person", "key": "instrument", "text": "最近在学吉他",
             "source": ["m1"]},
        ]
    }  # fmt: skip
    fake_llm.enqueue("好厉害", json.dumps(extraction, ensure_ascii=False))
    await ask(peer_a, fake_llm, GROUP_C, CAROL, "我最近在学吉他，手指好疼")
    await fake_llm.wait_for_requests(2, timeout=15)  # the reply, then the extraction job
    extraction_request = fake_llm.chat_requests()[1]
    assert "只输出 JSON" in extraction_request.system_prompt

    engine = create_engine(bot.database_url)
    repo = MemoryRepository(session_factory(engine))
    try:
        for _ in range(100):
            items = await repo.list_items(scopes=None, subject_user_id=CAROL)
            if items:
                break
            await asyncio.sleep(0.05)
        assert [(i.text, i.kind, i.origin) for i in items] == [
            ("最近在学吉他", "person_facts", "extract")
        ]
    finally:
        await engine.dispose()

    await asyncio.sleep(3.2)  # group reply cooldown
    follow_up = await ask(peer_a, fake_llm, GROUP_C, CAROL, "我在练什么乐器？")
    assert "最近在学吉他" in person_facts_block(follow_up.system_prompt)
