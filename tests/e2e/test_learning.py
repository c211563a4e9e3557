"""Group learning as a group meets it: the bot picks up *this* group's wording and rhythm,
keeps them out of other groups, and drops what an admin rejected with 「不可以」."""

from __future__ import annotations

import asyncio

import pytest

from pallas.core.db.engine import session_factory
from pallas.core.db.repositories.snapshots import SnapshotRepository
from tests.e2e.conftest import BOT_ID, DbView, at_bot, sent_texts, write_group_config
from tests.harness.bot_process import BotProcess
from tests.harness.fake_openai import FakeOpenAI, RecordedRequest
from tests.harness.learning_script import TOPICS, group_script, is_label_request, label_answer
from tests.harness.onebot_peer import OneBotPeer

pytestmark = pytest.mark.e2e

GROUP_A, GROUP_B = 64_000_001, 64_000_002
MEMBERS = (51_001, 51_002, 51_003, 51_004, 51_005)
ASKER, GROUP_ADMIN, SUPERUSER = 51_900, 51_901, 10001
QUIET = "[routing.ambient]\nenabled = false\n"  # no random ambient replies while feeding


def chat_requests(fake: FakeOpenAI) -> list[RecordedRequest]:
    return [r for r in fake.chat_requests() if "【回复形状与输出契约】" in r.system_prompt]


def block(system: str, header: str) -> str:
    """The system-prompt section that starts with `header` ("" when absent)."""
    return next((part for part in system.split("\n\n") if part.startswith(header)), "")


async def feed_group(peer: OneBotPeer, db: DbView) -> int:
    lines = group_script(110, first_id=700_000, users=MEMBERS)
    for line in lines:
        segments = [{"type": "text", "data": {"text": line.text}}]
        if line.reply_to is not None:
            segments.insert(0, {"type": "reply", "data": {"id": str(line.reply_to)}})
        event = peer.group_message(
            GROUP_A, line.user_id, segments, message_id=line.message_id, card=f"群友{line.user_id}"
        )
        await peer.send_event(event)
    for n, text in enumerate(("大家好", "今天上班好累", "周末见")):
        await peer.send_event(peer.group_message(GROUP_B, MEMBERS[n], text))
    await db.wait_for_count(len(lines), group_id=GROUP_A)
    await db.wait_for_count(3, group_id=GROUP_B)
    return len(lines)


async def ask(peer: OneBotPeer, fake: FakeOpenAI, group: int, text: str) -> RecordedRequest:
    before = len(chat_requests(fake))
    sends_before = len(peer.sends())
    await peer.send_event(peer.group_message(group, ASKER, at_bot(text)))
    await peer.wait_for_calls("send_group_msg", "send_msg", count=sends_before + 1, timeout=15)
    return chat_requests(fake)[before]


async def test_group_style_is_learned_kept_local_and_dropped_on_feedback(
    bot: BotProcess, peer: OneBotPeer, fake_llm: FakeOpenAI, db: DbView
) -> None:
    write_group_config(bot, GROUP_A, QUIET)
    write_group_config(bot, GROUP_B, QUIET)
    fed = await feed_group(peer, db)
    assert fed >= 280 and chat_requests(fake_llm) == [] and peer.sends() == []

    # The sweep, on demand: every label request is answered from the queue.
    fake_llm.enqueue(*[label_answer()] * 8)
    await peer.send_event(peer.group_message(GROUP_A, SUPERUSER, "/pallas learn now"))
    report = await peer.wait_for_calls("send_group_msg", "send_msg", timeout=60)
    assert "学习完成" in sent_texts(report)[0]
    labelled = [r for r in fake_llm.chat_requests() if is_label_request(r.system_prompt)]
    assert len(labelled) >= 5  # ~200 pairs in batches of 40
    assert all("确实可以" not in r.system_prompt for r in labelled)  # pairs travel as data
    fake_llm.script.clear()

    # Group A: its own pairs for a similar trigger, and a shape contract from its rhythm.
    first = await ask(peer, fake_llm, GROUP_A, "快了吗？")
    guidance = block(first.system_prompt, "【群表达指导】")
    assert "- 触发「快了快了」时：确实可以" in guidance
    assert "本群真人单条短气泡为主" in guidance
    shape = block(first.system_prompt, "【回复形状与输出契约】")
    assert "最多 1 段" in shape and "节奏偏 single" in shape and "每段 8–40 字" in shape

    # Group B: none of group A's style.
    other = await ask(peer, fake_llm, GROUP_B, "快了吗？")
    assert "【群表达指导】" not in other.system_prompt
    assert all(response not in other.system_prompt for _, response in TOPICS)
    other_shape = block(other.system_prompt, "【回复形状与输出契约】")
    assert "最多 2 段" in other_shape and "每段 8–80 字" in other_shape

    # An admin rejects the bot's line in group A: recalled, not answered, blamed.
    bot_lines = [
        mid
        for mid, m in peer.messages.items()
        if m["sender"]["user_id"] == BOT_ID
        and m["group_id"] == GROUP_A
        and "学习完成" not in str(m["message"])
    ]
    rejected = bot_lines[-1]
    snapshots = SnapshotRepository(session_factory(db.engine))

    async def snapshot_saved() -> bool:
        return await snapshots.by_bot_message(BOT_ID, GROUP_A, rejected) is not None

    await db.wait_for(snapshot_saved, what="the reply's injection snapshot")
    blamed_lines = [line for line in guidance.splitlines() if line.startswith("- 触发")]
    requests_before = len(fake_llm.chat_requests())
    rejection = [
        {"type": "reply", "data": {"id": str(rejected)}},
        {"type": "at", "data": {"qq": str(BOT_ID)}},
        {"type": "text", "data": {"text": " 不可以"}},
    ]
    await peer.send_event(peer.group_message(GROUP_A, GROUP_ADMIN, rejection, role="admin"))
    recalls = await peer.wait_for_calls("delete_msg", timeout=10)
    assert int(recalls[0].params["message_id"]) == rejected
    await asyncio.sleep(3.5)  # past the merge window and the group cooldown
    assert len(fake_llm.chat_requests()) == requests_before  # 「不可以」 got no chat reply

    again = await ask(peer, fake_llm, GROUP_A, "快了吗？")
    new_guidance = block(again.system_prompt, "【群表达指导】")
    assert blamed_lines and all(line not in new_guidance for line in blamed_lines)
    assert "确实可以" not in new_guidance

    sends_before = len(peer.sends())
    await peer.send_event(peer.group_message(GROUP_A, SUPERUSER, "/pallas feedback list"))
    listing = sent_texts(
        await peer.wait_for_calls("send_group_msg", "send_msg", count=sends_before + 1)
    )
    assert "[生效]" in listing[-1] and f"表达×{len(blamed_lines)}" in listing[-1]
