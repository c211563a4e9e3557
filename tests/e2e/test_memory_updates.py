"""Updates and denials decided by meaning, through the running bot (issue 34): a correction taught
with 记住 and a denial said in plain chat each retire the old fact — the next request for that
member holds only the new one — once with the cheap model answering the structured judgement and
once with it unavailable (the rules decide)."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest

from pallas.core.db.engine import create_engine, session_factory
from pallas.features.memory.records import MemoryItem
from pallas.features.memory.repository import MemoryRepository
from pallas.features.memory_upkeep.update_judge import JUDGE_SYSTEM
from tests.e2e.conftest import at_bot, write_group_config
from tests.e2e.test_memory import ask, person_facts_block, wait_for_reply
from tests.e2e.test_teaching import teach
from tests.harness.bot_process import BotProcess
from tests.harness.fake_openai import FakeOpenAI, RecordedRequest, Scripted
from tests.harness.onebot_peer import OneBotPeer

pytestmark = pytest.mark.e2e

GROUP = 65_100_001

ALICE = 53_001
OTHER_GROUP = GROUP + 7
COOLDOWN_S = 3.2  # the group's reply cooldown between two asks


@pytest.fixture
async def repo(bot: BotProcess) -> AsyncIterator[MemoryRepository]:
    engine = create_engine(bot.database_url)
    yield MemoryRepository(session_factory(engine))
    await engine.dispose()


async def history(repo: MemoryRepository) -> dict[str, MemoryItem]:
    items = await repo.list_items(scopes=None, subject_user_id=ALICE, include_deleted=True)
    return {i.text: i for i in items}


async def retired(repo: MemoryRepository, text: str) -> MemoryItem:
    """The row saying `text` once it is retired (the extraction job runs in the background)."""
    for _ in range(200):
        item = (await history(repo)).get(text)
        if item is not None and item.deleted_at is not None:
            return item
        await asyncio.sleep(0.05)
    raise TimeoutError(f"{text!r} was not retired: {sorted(await history(repo))}")


def deny_the_cat(body: dict[str, Any]) -> str:
    """The extraction answer: the ref listed for "TA养了一只猫" is denied."""
    listed = str(body["messages"][-1]["content"])
    ref = re.search(r"\[(f\d+)\] u1: TA养了一只猫", listed)
    assert ref is not None, listed
    facts = [
        {"subject": "u1", "kind": "person", "key": "pet", "text": "已经不养猫了",
         "source": [f"m{i}"], "op": "deny", "replaces": [ref.group(1)]}
        for i in range(1, 9)
    ]  # fmt: skip
    return json.dumps({"facts": facts}, ensure_ascii=False)


def judge_requests(fake_llm: FakeOpenAI) -> list[RecordedRequest]:
    return [r for r in fake_llm.chat_requests() if JUDGE_SYSTEM in r.system_prompt]


async def chat_denial(peer: OneBotPeer, fake_llm: FakeOpenAI, denial: str) -> RecordedRequest:
    """Alice says `denial` in plain chat (to nobody), then asks the bot something: the reply
    runs the group's extraction job over both lines. Returns the job's request."""
    await peer.send_event(peer.group_message(GROUP, ALICE, denial))
    await asyncio.sleep(0.3)
    seen = len(fake_llm.chat_requests())
    await ask(peer, fake_llm, GROUP, ALICE, "周末有什么好玩的推荐吗")
    requests = await fake_llm.wait_for_requests(seen + 2, timeout=15)
    return requests[seen + 1]


async def test_with_the_model_a_correction_and_a_denial_retire_the_old_facts(
    bot: BotProcess, peer: OneBotPeer, fake_llm: FakeOpenAI, repo: MemoryRepository
) -> None:
    write_group_config(bot, GROUP, "[memory.extraction]\nevery_n_turns = 1\n")
    assert await teach(peer, GROUP, ALICE, "记住 我在腾讯上班") == "记住啦～"
    assert judge_requests(fake_llm) == [], "nothing stored yet: no judge call"

    # No rule reads "自由职业者" as a job: only the model's judgement retires the old one.
    fake_llm.enqueue(json.dumps({"op": "update", "replaces": ["f1"]}))
    reply = await teach(peer, GROUP, ALICE, "记住 我现在是自由职业者了")
    assert reply == "记住啦～ 之前记的「你在腾讯上班」我划掉了"
    [judge] = judge_requests(fake_llm)
    assert judge.body["response_format"]["type"] == "json_schema"
    assert "[f1] TA在腾讯上班" in judge.messages[-1]["content"]
    old = (await history(repo))["TA在腾讯上班"]
    assert (old.delete_reason, old.replaced_by) == (
        "model:update",
        (await history(repo))["TA现在是自由职业者了"].id,
    )

    # A denial said in chat, judged by the extraction model: it names the ref the prompt gave
    # Alice's cat, and the message ref of her line (offered for each line of the batch).
    assert await teach(peer, GROUP, ALICE, "记住 我养了一只猫") == "记住啦～"
    before = len(peer.sends(OTHER_GROUP))
    await peer.send_event(peer.group_message(OTHER_GROUP, ALICE, at_bot("记住 我养了一只狗")))
    await wait_for_reply(peer, OTHER_GROUP, before + 1)
    fake_llm.enqueue("好哦", Scripted(respond=deny_the_cat))
    job = await chat_denial(peer, fake_llm, "我已经不养猫了")
    assert job.body["response_format"]["json_schema"]["name"] == "memory_facts"
    assert "狗" not in job.messages[-1]["content"], "another group's facts are never listed"
    cat = await retired(repo, "TA养了一只猫")
    assert cat.delete_reason == "model:deny"
    denial = (await history(repo))["已经不养猫了"]
    assert (cat.replaced_by, denial.delete_reason) == (denial.id, "denial")

    await asyncio.sleep(COOLDOWN_S)
    later = await ask(peer, fake_llm, GROUP, ALICE, "我现在是做什么的，家里有宠物吗")
    block = person_facts_block(later.system_prompt)
    assert "TA现在是自由职业者了" in block
    assert "腾讯" not in block and "猫" not in block, block


async def test_without_the_model_the_rules_retire_the_old_facts(
    bot: BotProcess, peer: OneBotPeer, fake_llm: FakeOpenAI, repo: MemoryRepository
) -> None:
    write_group_config(bot, GROUP, "[memory.extraction]\nevery_n_turns = 1\n")
    assert await teach(peer, GROUP, ALICE, "记住 我住在海淀区") == "记住啦～"
    assert (
        await teach(peer, GROUP, ALICE, "记住 我养了一只猫") == "记住啦～"
    )  # the judge answers junk

    fake_llm.fail_for(5.0)  # the cheap model is down while she corrects herself
    reply = await teach(peer, GROUP, ALICE, "记住 我上个月搬到朝阳了")
    fake_llm.fail_for(0)
    assert reply == "记住啦～ 之前记的「你住在海淀区」我划掉了"
    old = (await history(repo))["TA住在海淀区"]
    assert old.delete_reason == "rule:update"

    # The reply is written, the extraction call fails: the rules honour the denial.
    fake_llm.enqueue("好哦", Scripted(status=500))
    await chat_denial(peer, fake_llm, "我已经不养猫了")
    cat = await retired(repo, "TA养了一只猫")
    assert cat.delete_reason == "rule:deny"
    assert (await history(repo))["TA已经不养猫了"].delete_reason == "denial"

    await asyncio.sleep(COOLDOWN_S)
    later = await ask(peer, fake_llm, GROUP, ALICE, "我住哪，家里有宠物吗")
    block = person_facts_block(later.system_prompt)
    assert "TA上个月搬到朝阳了" in block
    assert "海淀" not in block and "猫" not in block, block
