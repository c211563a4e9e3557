"""Memory that understands what members mean, through the running bot: a fact taught before three
others is found days later by a question in other words, a member's update replaces the old fact
(taught, or said in chat and extracted), "你记得我什么" lists the member's own facts, and another
group's request holds none of it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import pytest

from pallas.core.db.engine import create_engine, session_factory
from pallas.features.memory.repository import MemoryRepository
from pallas.features.memory_prompt import RECALL_HEADER
from pallas.features.memory_upkeep.update_judge import JUDGE_SYSTEM
from tests.e2e.conftest import BOT_ID, at_bot, write_group_config
from tests.e2e.test_memory import ask, person_facts_block, wait_for_reply
from tests.harness.bot_process import BotProcess
from tests.harness.fake_openai import FakeOpenAI
from tests.harness.onebot_peer import OneBotPeer

pytestmark = pytest.mark.e2e

GROUP_A, GROUP_B = 66_000_001, 66_000_002
ALICE, BOB = 52_001, 52_002
DAYS = 86_400
TAUGHT = ["我对花生过敏", "我住在海淀区", "我手机壳是粉色的", "我喜欢收集明信片"]
FILLER = ["今天好热", "晚饭吃啥", "刚下班", "这关好难", "有人开黑吗", "摸鱼中"]


@pytest.fixture
async def peer_a(bot: BotProcess) -> AsyncIterator[OneBotPeer]:
    client = OneBotPeer(bot.ws_url, self_id=BOT_ID, access_token=bot.access_token)
    await client.connect()
    yield client
    await client.close()


async def teach(peer: OneBotPeer, group: int, user: int, text: str) -> str:
    before = len(peer.sends(group))
    await peer.send_event(peer.group_message(group, user, at_bot(f"记住 {text}")))
    return (await wait_for_reply(peer, group, before + 1))[-1]


async def test_paraphrased_question_finds_the_fact_updates_replace_and_groups_stay_apart(
    bot: BotProcess, peer_a: OneBotPeer, fake_llm: FakeOpenAI
) -> None:
    for text in TAUGHT:  # the asked-about fact first, three unrelated ones after it
        assert await teach(peer_a, GROUP_A, ALICE, text) == "记住啦～"
    for i, text in enumerate(FILLER):
        await peer_a.send_event(peer_a.group_message(GROUP_A, BOB + i % 2, text))
    await asyncio.sleep(0.5)
    # teaching costs no chat call; only the judge of what a new fact replaces
    assert all(JUDGE_SYSTEM in r.system_prompt for r in fake_llm.chat_requests())
    await peer_a.close()
    await bot.stop()

    later = BotProcess(
        bot.workdir,
        env_overrides={**bot.env_overrides, "PALLAS_CLOCK_OFFSET_SECONDS": str(6 * DAYS)},
    )
    await later.start()
    peer = OneBotPeer(
        later.ws_url, self_id=BOT_ID, access_token=later.access_token, clock_offset_s=6 * DAYS
    )
    await peer.connect()
    try:
        asked = await ask(peer, fake_llm, GROUP_A, ALICE, "我有什么东西不能吃？")
        assert "TA对花生过敏" in person_facts_block(asked.system_prompt)
        assert "记住 我对花生过敏" not in asked.system_prompt, "from memory, not the timeline"

        elsewhere = await ask(peer, fake_llm, GROUP_B, ALICE, "我有什么东西不能吃？")
        assert "花生" not in elsewhere.system_prompt
        assert "海淀" not in elsewhere.system_prompt

        moved = await teach(peer, GROUP_A, ALICE, "我搬到朝阳了")
        assert moved == "记住啦～ 之前记的「你住在海淀区」我划掉了"
        await asyncio.sleep(3.2)  # group reply cooldown
        where = await ask(peer, fake_llm, GROUP_A, ALICE, "我住哪个区？")
        block = person_facts_block(where.system_prompt)
        assert "TA搬到朝阳了" in block
        assert "海淀" not in where.system_prompt, "the replaced fact is no longer injected"

        chat_calls = len(fake_llm.chat_requests())
        before = len(peer.sends(GROUP_A))
        await peer.send_event(peer.group_message(GROUP_A, ALICE, at_bot("你记得我什么")))
        reply = (await wait_for_reply(peer, GROUP_A, before + 1))[-1]
        assert reply.startswith(RECALL_HEADER)
        assert "对花生过敏" in reply and "搬到朝阳了" in reply and "海淀" not in reply
        assert len(fake_llm.chat_requests()) == chat_calls, "answered locally, no LLM call"

        before = len(peer.sends(GROUP_A))
        await peer.send_event(peer.group_message(GROUP_A, BOB, at_bot("你记得我什么")))
        bob_reply = (await wait_for_reply(peer, GROUP_A, before + 1))[-1]
        assert "花生" not in bob_reply and "朝阳" not in bob_reply
    finally:
        await peer.close()
        await later.stop()
        print(f"--- restarted bot log (tail) ---\n{later.tail_log(60)}")


async def test_a_denial_said_in_chat_retires_the_fact_through_extraction(
    bot: BotProcess, peer_a: OneBotPeer, fake_llm: FakeOpenAI
) -> None:
    group = 66_000_003
    write_group_config(bot, group, "[memory.extraction]\nevery_n_turns = 1\n")
    assert await teach(peer_a, group, ALICE, "我住在海淀区") == "记住啦～"
    # The cheap model's answer names the source by batch ref; which ref Alice's message gets
    # depends on what the batch holds, so the answer offers each one: the extraction keeps only
    # a fact whose source really is Alice's own message saying it.
    denial = {
        "facts": [
            {"subject": "u1", "kind": "person", "key": "residence", "text": "已经不住海淀了",
             "source": [f"m{i}"]}
            for i in range(1, 7)
        ]
    }  # fmt: skip
    fake_llm.enqueue("哦哦，搬家啦", json.dumps(denial, ensure_ascii=False))
    await ask(peer_a, fake_llm, group, ALICE, "我已经不住海淀了")
    await fake_llm.wait_for_requests(2, timeout=15)  # the reply, then the extraction job
    assert "只输出 JSON" in fake_llm.chat_requests()[1].system_prompt

    engine = create_engine(bot.database_url)
    repo = MemoryRepository(session_factory(engine))
    try:
        for _ in range(100):
            history = await repo.list_items(
                scopes=None, subject_user_id=ALICE, include_deleted=True
            )
            if any(i.delete_reason == "rule:deny" for i in history):
                break
            await asyncio.sleep(0.05)
        old = next(i for i in history if i.text == "TA住在海淀区")
        new = next(i for i in history if i.text == "已经不住海淀了")
        # an answer without an op: the rules decide; the bare negation is history only
        assert (old.delete_reason, old.replaced_by, new.delete_reason) == (
            "rule:deny",
            new.id,
            "denial",
        )
    finally:
        await engine.dispose()

    await asyncio.sleep(3.2)  # group reply cooldown
    later = await ask(peer_a, fake_llm, group, ALICE, "我住哪个区？")
    assert "TA住在海淀区" not in later.system_prompt, "the contradicted fact is not injected"
    assert "已经不住海淀了" not in person_facts_block(later.system_prompt), "nor its denial"
