"""Teaching the bot with "@牛牛 记住 …", as members do it: one test per way a teaching used to
be lost or corrupted without the member noticing (issue 35).

Each runs the real bot process against a OneBot v11 peer over WebSocket and a fake
OpenAI-compatible model, and reads what was stored from the bot's own database.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from pallas.core.db.engine import create_engine, session_factory
from pallas.features.memory.records import MemoryItem
from pallas.features.memory.repository import MemoryRepository
from pallas.features.memory_upkeep.update_judge import JUDGE_SYSTEM
from tests.e2e.conftest import at_bot
from tests.e2e.test_memory import ask, person_facts_block, wait_for_reply
from tests.harness.bot_process import BotProcess
from tests.harness.fake_openai import FakeOpenAI
from tests.harness.onebot_peer import OneBotPeer

pytestmark = pytest.mark.e2e
# one bot for the module; each test talks in its own group, as its own members (a member's
# facts are listed across groups)
SHARED_BOT = True


@pytest.fixture
async def repo(bot: BotProcess) -> AsyncIterator[MemoryRepository]:
    engine = create_engine(bot.database_url)
    yield MemoryRepository(session_factory(engine))
    await engine.dispose()


async def teach(peer: OneBotPeer, group: int, user: int, text: str) -> str:
    """Say `text` to the bot and return its one reply."""
    before = len(peer.sends(group))
    await peer.send_event(peer.group_message(group, user, at_bot(text)))
    return (await wait_for_reply(peer, group, before + 1))[-1]


async def live_texts(repo: MemoryRepository, user: int) -> list[str]:
    items: list[MemoryItem] = await repo.list_items(scopes=None, subject_user_id=user)
    return sorted(i.text for i in items)


async def test_a_teaching_without_wo_is_the_speakers_fact(
    group: int,
    member_ids: Iterator[int],
    bot: BotProcess,
    peer: OneBotPeer,
    fake_llm: FakeOpenAI,
    repo: MemoryRepository,
) -> None:
    alice = next(member_ids)
    assert await teach(peer, group, alice, "记住 对芒果过敏") == "记住啦～"
    assert await teach(peer, group, alice, "记住 家里狗子是只萨摩耶") == "记住啦～"
    # the second teaching asks the cheap model what it replaces (it has a stored fact): the
    # only model call; nothing is handed to the chat
    assert all(JUDGE_SYSTEM in r.system_prompt for r in fake_llm.chat_requests())
    assert await live_texts(repo, alice) == ["TA家里狗子是只萨摩耶", "TA对芒果过敏"]

    request = await ask(peer, fake_llm, group, alice, "周末想做个水果沙拉，放点啥好")
    assert "TA对芒果过敏" in person_facts_block(request.system_prompt)


async def test_a_question_is_answered_from_memory_and_never_stored(
    group: int,
    member_ids: Iterator[int],
    bot: BotProcess,
    peer: OneBotPeer,
    fake_llm: FakeOpenAI,
    repo: MemoryRepository,
) -> None:
    alice = next(member_ids)
    assert await teach(peer, group, alice, "记住 我是做平面设计的") == "记住啦～"
    reply = await teach(peer, group, alice, "你记得我是做哪行的吗")
    assert reply == "记得呀：你是做平面设计的"
    assert await live_texts(repo, alice) == ["TA是做平面设计的"], "the question is not a fact"
    assert fake_llm.chat_requests() == [], "answered locally"

    # A question no single fact answers goes to the chat, with her facts in its context.
    request = await ask(peer, fake_llm, group, alice, "还记得我周末一般干嘛吗")
    assert "TA是做平面设计的" in person_facts_block(request.system_prompt)
    assert await live_texts(repo, alice) == ["TA是做平面设计的"]


async def test_an_event_is_not_retired_by_a_later_fact(
    group: int,
    member_ids: Iterator[int],
    bot: BotProcess,
    peer: OneBotPeer,
    fake_llm: FakeOpenAI,
    repo: MemoryRepository,
) -> None:
    alice = next(member_ids)
    assert await teach(peer, group, alice, "记住 我上周末帮表妹搬家") == "记住啦～"
    assert await teach(peer, group, alice, "记住 我读高二了") == "记住啦～", "nothing was replaced"
    assert await live_texts(repo, alice) == ["TA上周末帮表妹搬家", "TA读高二了"]

    # A real update still retires the fact it replaces, and says so.
    assert await teach(peer, group, alice, "记住 我住在海淀区") == "记住啦～"
    reply = await teach(peer, group, alice, "记住 我搬到朝阳了")
    assert reply == "记住啦～ 之前记的「你住在海淀区」我划掉了"
    assert "TA住在海淀区" not in await live_texts(repo, alice)
    assert "TA上周末帮表妹搬家" in await live_texts(repo, alice)


ELEVEN = [
    "我的幸运数字是7",
    "我喜欢吃火锅",
    "我养了一只橘猫",
    "我住在海淀区",
    "我每天六点起床",
    "我在学吉他",
    "我最喜欢蓝色",
    "我是做会计的",
    "我老家在成都",
    "我怕冷",
    "我周三晚上打羽毛球",
]


async def test_eleven_facts_the_oldest_reaches_the_request(
    group: int,
    member_ids: Iterator[int],
    bot: BotProcess,
    peer: OneBotPeer,
    fake_llm: FakeOpenAI,
    repo: MemoryRepository,
) -> None:
    bob = next(member_ids)
    for text in ELEVEN:
        assert await teach(peer, group, bob, f"记住 {text}") == "记住啦～"
    assert len(await live_texts(repo, bob)) == 11

    # No word of the oldest fact is in the question: relevance alone would not pick it.
    request = await ask(peer, fake_llm, group, bob, "帮我挑个彩票号码吧")
    block = person_facts_block(request.system_prompt)
    assert "TA的幸运数字是7" in block
    assert sum(f"TA{t[1:]}" in block for t in ELEVEN) == 11, block
