"""Private chat as members meet it: a friend DMs the bot and is answered in private; what they
tell it there stays theirs (never in a group request, there when they ask in private later);
a stranger is not answered until the operator allows strangers; a flood of DMs costs at most
the member limit.

Each runs the real bot process against a OneBot v11 peer over WebSocket and a fake
OpenAI-compatible model.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from pallas.core.db.engine import create_engine, session_factory
from pallas.features.cost.config import LIMIT_PHRASES
from pallas.features.memory import MemoryRepository
from tests.e2e.conftest import DbView, at_bot, sent_texts
from tests.e2e.test_memory import ask, person_facts_block, request_carrying, wait_for_reply
from tests.harness.bot_process import BotProcess
from tests.harness.fake_openai import FakeOpenAI, RecordedRequest
from tests.harness.group_defaults import write_group_defaults
from tests.harness.onebot_peer import ApiCall, OneBotPeer

pytestmark = pytest.mark.e2e

GROUP = 66_000_001
ALICE, BOB, STRANGER = 53_001, 53_002, 53_009
SUPERUSER = 10_001  # SUPERUSERS of the bot process (tests/harness/bot_process.py)


async def wait_private(peer: OneBotPeer, user: int, count: int, timeout: float = 10.0) -> list[str]:
    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        if len(peer.private_sends(user)) >= count:
            return sent_texts(peer.private_sends(user))
        await asyncio.sleep(0.05)
    raise TimeoutError(f"expected {count} private sends to {user}, saw {peer.private_sends(user)}")


async def dm_request(
    peer: OneBotPeer, fake_llm: FakeOpenAI, user: int, text: str, *, sub_type: str = "friend"
) -> RecordedRequest:
    """DM the bot and return the chat request that carried this very message."""
    event = peer.private_message(user, text, sub_type=sub_type)
    return await request_carrying(fake_llm, text, peer.send_event(event))


def group_sends(peer: OneBotPeer) -> list[ApiCall]:
    return [c for c in peer.sends() if c not in peer.private_sends()]


async def test_a_friends_dm_is_answered_in_private(
    bot: BotProcess, peer: OneBotPeer, fake_llm: FakeOpenAI, db: DbView
) -> None:
    fake_llm.enqueue("在的，怎么啦")
    request = await dm_request(peer, fake_llm, ALICE, "在吗，想问你个事")
    assert await wait_private(peer, ALICE, 1) == ["在的，怎么啦"]
    assert group_sends(peer) == [], "a DM is never answered in a group"
    assert "在吗，想问你个事" in str(request.messages[-1]["content"])
    await db.wait_for_count(1, group_id=0)  # her line, stored as a private message
    await db.wait_for_replies(0, ALICE, 1)


def set_defaults(bot: BotProcess, **tables: dict[str, object]) -> None:
    """Merge `tables` into the bot's config/groups/default.toml (hot-reloaded)."""
    write_group_defaults(bot.config_dir, **tables)  # type: ignore[arg-type]


async def dm(peer: OneBotPeer, user: int, text: str, count: int) -> str:
    """DM the bot and return its `count`-th private answer to `user`."""
    await peer.send_event(peer.private_message(user, text))
    return (await wait_private(peer, user, count))[-1]


async def test_what_a_friend_tells_in_private_stays_in_their_private_chat(
    bot: BotProcess, peer: OneBotPeer, fake_llm: FakeOpenAI
) -> None:
    assert await dm(peer, ALICE, "记住 我对花生过敏", 1) == "记住啦～"
    # Bob taught the bot in the group; Alice taught it something there too.
    await peer.send_event(peer.group_message(GROUP, BOB, at_bot("记住 我在学日语")))
    await peer.send_event(peer.group_message(GROUP, ALICE, at_bot("记住 我养了只柯基")))
    await wait_for_reply(peer, GROUP, 2)

    in_group = await ask(peer, fake_llm, GROUP, ALICE, "周末做点什么菜好")
    assert "花生" not in str(in_group.body), "a private fact never enters a group request"
    assert "TA养了只柯基" in person_facts_block(in_group.system_prompt)
    bob_in_group = await ask(peer, fake_llm, GROUP, BOB, "周末做点什么菜好呀")
    assert "花生" not in str(bob_in_group.body)

    in_private = await dm_request(peer, fake_llm, ALICE, "周末做点什么菜好")
    facts = person_facts_block(in_private.system_prompt)
    assert "TA对花生过敏" in facts, "told in private, recalled in private"
    assert "TA养了只柯基" in facts, "her own fact from the group (use_group_facts)"
    assert "日语" not in str(in_private.body), "never another member's facts"
    assert "在学日语" not in str(in_private.body)

    bob_private = await dm_request(peer, fake_llm, BOB, "周末做点什么菜好呀")
    assert "花生" not in str(bob_private.body), "never in another user's private request"
    assert "周末做点什么菜好" not in str(bob_private.messages[:-1]), "nor Alice's session"


async def test_a_strangers_dm_is_answered_only_once_strangers_are_allowed(
    bot: BotProcess, peer: OneBotPeer, fake_llm: FakeOpenAI, db: DbView
) -> None:
    await peer.send_event(peer.private_message(STRANGER, "你好呀", sub_type="other"))
    await peer.send_event(peer.private_message(BOB, "在吗", sub_type="group"))  # a temp session
    await db.wait_for_count(2, group_id=0)  # recorded all the same
    await asyncio.sleep(2.0)
    assert peer.private_sends() == [] and fake_llm.chat_requests() == []
    assert "not answered: strangers_off" in bot.tail_log(200)
    assert "not answered: group_temp_off" in bot.tail_log(200)

    set_defaults(bot, private={"strangers": True})
    await asyncio.sleep(1.2)  # the config files are checked once a second
    fake_llm.enqueue("你好～")
    await peer.send_event(peer.private_message(STRANGER, "你好呀，能聊聊吗", sub_type="other"))
    assert await wait_private(peer, STRANGER, 1) == ["你好～"]
    assert peer.private_sends(BOB) == [], "temp sessions are still off"


async def test_fifteen_dms_in_a_minute_cost_at_most_the_member_limit(
    bot: BotProcess, peer: OneBotPeer, fake_llm: FakeOpenAI
) -> None:
    set_defaults(bot, cost={"member": {"enabled": True}})  # the limit the tests switch off
    await asyncio.sleep(1.2)
    for i in range(15):
        await peer.send_event(peer.private_message(ALICE, f"第{i + 1}个问题：今天吃什么{i}"))
        await asyncio.sleep(1.0)
    await asyncio.sleep(1.5)
    calls = len(fake_llm.chat_requests())
    assert 1 <= calls <= 4, f"{calls} reply calls for 15 DMs (member burst is 4)"
    texts = sent_texts(peer.private_sends(ALICE))
    assert sum(t in LIMIT_PHRASES for t in texts) == 1, texts
    assert group_sends(peer) == []


async def test_admin_commands_in_private_are_for_superusers_only(
    bot: BotProcess, peer: OneBotPeer, fake_llm: FakeOpenAI
) -> None:
    assert "私聊已记录消息" in await dm(peer, SUPERUSER, "/pallas status", 1)
    assert await dm(peer, ALICE, "/pallas status", 1) == "私聊里只有超级用户可以用这个命令哦"
    assert fake_llm.chat_requests() == []
    # why / context in private look at the private chats, or at a group named by number
    fake_llm.enqueue("在的")
    assert await dm(peer, BOB, "在吗", 1) == "在的"
    await peer.send_event(peer.group_message(GROUP, ALICE, "今天好热"))
    await asyncio.sleep(1.0)  # the history is written behind
    why_private = await dm(peer, SUPERUSER, "/pallas why", 2)
    assert why_private.startswith("（私聊，") and f"{BOB}「在吗」" in why_private
    assert "今天好热" not in why_private
    why_group = await dm(peer, SUPERUSER, f"/pallas why {GROUP} 3", 3)
    assert f"{ALICE}「今天好热」" in why_group and "在吗" not in why_group
    private_context = await dm(peer, SUPERUSER, "/pallas context", 4)
    assert f"private chat · user {BOB}" in private_context and "在的" in private_context
    assert await dm(peer, SUPERUSER, f"/pallas context {GROUP}", 5) == f"群 {GROUP} 还没有回复记录"


async def test_quick_follow_up_dms_are_one_turn(
    bot: BotProcess, peer: OneBotPeer, fake_llm: FakeOpenAI
) -> None:
    fake_llm.enqueue("明天多云，记得带伞")
    await peer.send_event(peer.private_message(ALICE, "我想问，"))
    await asyncio.sleep(0.4)
    await peer.send_event(peer.private_message(ALICE, "明天天气怎么样"))
    assert await wait_private(peer, ALICE, 1) == ["明天多云，记得带伞"]
    await asyncio.sleep(2.0)
    [request] = fake_llm.chat_requests()
    said = str(request.messages[-1]["content"])
    assert "我想问" in said and "明天天气怎么样" in said
    assert len(peer.private_sends(ALICE)) == 1


def extraction_answer(text: str) -> str:
    facts = [{"subject": "u1", "kind": "person", "key": "plan", "text": text, "source": ["m1"]}]
    return json.dumps({"facts": facts}, ensure_ascii=False)


async def test_what_a_friend_says_in_passing_is_remembered_in_their_private_chat_only(
    bot: BotProcess, peer: OneBotPeer, fake_llm: FakeOpenAI
) -> None:
    """Background extraction runs per private chat: one friend's lines never reach the job of
    another's, and what it finds is stored in that friend's private scope."""
    set_defaults(bot, memory={"extraction": {"every_n_turns": 1, "min_interval_s": 0}})
    await asyncio.sleep(1.2)
    fake_llm.enqueue("深圳挺好的", json.dumps({"facts": []}))
    await dm_request(peer, fake_llm, BOB, "我在深圳上班")
    await fake_llm.wait_for_requests(2, timeout=15)  # Bob's reply, then his chat's job
    fake_llm.enqueue("加油呀", extraction_answer("下个月要去杭州读研"))
    await dm_request(peer, fake_llm, ALICE, "跟你说，我下个月要去杭州读研了")
    await fake_llm.wait_for_requests(4, timeout=15)
    job = fake_llm.chat_requests()[3]
    assert "只输出 JSON" in job.system_prompt and "杭州读研" in str(job.body)
    assert "深圳" not in str(job.body), "another friend's private lines never in the job"

    engine = create_engine(bot.database_url)
    try:
        repo = MemoryRepository(session_factory(engine))
        for _ in range(100):
            items = await repo.list_items(subject_user_id=ALICE)
            if items:
                break
            await asyncio.sleep(0.05)
        assert [(i.text, i.scope, i.origin) for i in items] == [
            ("下个月要去杭州读研", f"private:{peer.self_id}:{ALICE}", "extract")
        ]
    finally:
        await engine.dispose()

    in_group = await ask(peer, fake_llm, GROUP, ALICE, "最近有什么安排吗")
    assert "杭州" not in str(in_group.body), "a private fact never enters a group request"
    later = await dm_request(peer, fake_llm, ALICE, "你还记得我最近要干嘛吗")
    assert "下个月要去杭州读研" in person_facts_block(later.system_prompt)
