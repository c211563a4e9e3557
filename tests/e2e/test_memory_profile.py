"""A member's profile consolidated by the cheap model, through the running bot (issue 34 item 1):
Alice teaches facts with a near-duplicate and a contradiction; once they settle the cheap model
(scripted) merges them and names the outdated one; the next request holds the consolidated
profile, not the superseded fact, while the raw facts stay for audit. A change afterwards, or an
unusable answer, gives back the rule-built profile."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest

from pallas.core.db.engine import create_engine, session_factory
from pallas.features.memory.profile_store import ProfileRepository
from pallas.features.memory.records import MemoryItem
from pallas.features.memory.repository import MemoryRepository
from pallas.features.memory_upkeep.consolidation import CONSOLIDATE_SYSTEM
from pallas.features.memory_upkeep.update_judge import JUDGE_SYSTEM
from tests.e2e.conftest import write_group_config
from tests.e2e.test_memory import ask, person_facts_block, wait_for_reply
from tests.e2e.test_teaching import teach
from tests.harness.bot_process import BotProcess
from tests.harness.fake_openai import FakeOpenAI, RecordedRequest, Scripted
from tests.harness.onebot_peer import OneBotPeer

pytestmark = pytest.mark.e2e

GROUP = 65_100_001

ALICE, BOB = 54_001, 54_002
PROFILE = "[memory.profile]\nconsolidate_delay_s = 1.5\nconsolidate_min_facts = 4\n"


@pytest.fixture
async def stores(bot: BotProcess) -> AsyncIterator[tuple[MemoryRepository, ProfileRepository]]:
    engine = create_engine(bot.database_url)
    sessions = session_factory(engine)
    yield MemoryRepository(sessions), ProfileRepository(sessions)
    await engine.dispose()


class Model:
    """The cheap model's answers: the judge adds, the first consolidation merges Alice's facts
    as a model that understood them would, later ones answer `later`; chat replies 好哦."""

    def __init__(self) -> None:
        self.consolidations = 0
        self.later = "整理不了"

    def __call__(self, body: dict[str, Any]) -> str:
        system = str(body["messages"][0]["content"])
        if JUDGE_SYSTEM in system:
            return json.dumps({"op": "add", "replaces": []})
        if CONSOLIDATE_SYSTEM not in system:
            return "好哦"
        self.consolidations += 1
        if self.consolidations > 1:
            return self.later
        listed = dict(re.findall(r"^\[(f\d+)\] (.+)$", body["messages"][-1]["content"], re.M))
        ref = {text: r for r, text in listed.items()}
        answer = {
            "statements": [
                {"text": "TA特别喜欢猫", "refs": [ref["TA喜欢猫"], ref["TA很喜欢猫咪"]]},
                {"text": "TA在字节上班", "refs": [ref["TA现在在字节上班"]]},
                {"text": "TA对花生过敏", "refs": [ref["TA对花生过敏"]]},
            ],
            "superseded": [{"ref": ref["TA在腾讯上班"], "by": ref["TA现在在字节上班"]}],
        }
        return json.dumps(answer, ensure_ascii=False)


def consolidation_requests(fake_llm: FakeOpenAI) -> list[RecordedRequest]:
    return [r for r in fake_llm.chat_requests() if CONSOLIDATE_SYSTEM in r.system_prompt]


async def row(repo: MemoryRepository, text: str) -> MemoryItem:
    items = await repo.list_items(scopes=None, subject_user_id=ALICE, include_deleted=True)
    return {i.text: i for i in items}[text]


async def until(check: Any, what: str) -> None:
    for _ in range(200):
        if await check():
            return
        await asyncio.sleep(0.05)
    raise TimeoutError(what)


async def test_the_cheap_model_consolidates_a_members_facts_and_the_next_request_holds_it(
    bot: BotProcess,
    peer: OneBotPeer,
    fake_llm: FakeOpenAI,
    stores: tuple[MemoryRepository, ProfileRepository],
) -> None:
    repo, profiles = stores
    model = Model()
    fake_llm.enqueue(*[Scripted(respond=model) for _ in range(30)])
    write_group_config(bot, GROUP, PROFILE)
    assert await teach(peer, GROUP, BOB, "记住 我是左撇子") == "记住啦～"
    for fact in ("我在腾讯上班", "我喜欢猫", "我对花生过敏", "我很喜欢猫咪", "我现在在字节上班"):
        assert (await teach(peer, GROUP, ALICE, f"记住 {fact}")).startswith("记住啦～")

    await until(lambda: _retired(repo, "TA在腾讯上班"), "the consolidation did not run")
    [call] = consolidation_requests(fake_llm)  # debounced: one call once her facts settled
    assert call.body["response_format"]["json_schema"]["name"] == "member_profile"
    assert "左撇子" not in call.messages[-1]["content"], "another member's facts are never listed"
    tencent = await row(repo, "TA在腾讯上班")
    bytedance = await row(repo, "TA现在在字节上班")
    assert (tencent.delete_reason, tencent.replaced_by) == ("model:consolidate", bytedance.id)
    assert (await row(repo, "TA很喜欢猫咪")).deleted_at is None, "raw facts are kept for audit"

    sent = len(peer.sends(GROUP))
    request = await ask(peer, fake_llm, GROUP, ALICE, "我平时喜欢什么，在哪上班")
    await wait_for_reply(peer, GROUP, sent + 1)  # its answer is not taken for the next one's
    block = person_facts_block(request.system_prompt)
    assert "「TA特别喜欢猫」" in block and "「TA在字节上班」" in block, block
    assert "腾讯" not in block and "猫咪" not in block, block
    stored = await profiles.get(tencent.scope, ALICE)
    assert stored is not None and stored.superseded == (tencent.id,)

    # A new fact: the consolidation no longer stands for her facts; the next one is garbage,
    # so the rule-built profile (every live fact) is what the model sees.
    assert await teach(peer, GROUP, ALICE, "记住 我养了一只狗") == "记住啦～"
    await until(lambda: _asked(fake_llm, 2), "no second consolidation")
    await asyncio.sleep(3.2)  # the group's reply cooldown
    request = await ask(peer, fake_llm, GROUP, ALICE, "我家里有什么宠物")
    block = person_facts_block(request.system_prompt)
    assert "TA养了一只狗" in block and "TA很喜欢猫咪" in block, block
    assert "特别喜欢" not in block and "腾讯" not in block, block


async def _retired(repo: MemoryRepository, text: str) -> bool:
    return (await row(repo, text)).deleted_at is not None


async def _asked(fake_llm: FakeOpenAI, count: int) -> bool:
    return len(consolidation_requests(fake_llm)) >= count
