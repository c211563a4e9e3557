"""Frames that used to end the adapter's receive loop are refused and the connection stays:
every normal message sent after them is recorded (through the real WebSocket)."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.e2e.conftest import DbView, at_bot
from tests.harness.bot_process import BotProcess
from tests.harness.fake_openai import FakeOpenAI
from tests.harness.onebot_peer import OneBotPeer

SHARED_BOT = True  # one bot for the module; each test talks in its own `group`
ALICE = 53_001


def nested(depth: int) -> str:
    return '{"post_type": "message", "x": ' + "[" * depth + "]" * depth + "}"


HOSTILE_FRAMES = {
    "nested_5000_deep": nested(5000),
    "integer_5000_digits": '{"post_type": "message", "user_id": ' + "9" * 5000 + "}",
    "echo_5000_digits": '{"status": "ok", "retcode": 0, "echo": "' + "7" * 5000 + '"}',
    "malformed_json": '{"post_type": "message", "user_id": ',
    "not_an_object": "[1, 2, 3]",
    "five_mib": json.dumps({"post_type": "notice", "pad": "x" * (5 * 1024 * 1024)}),
}


@pytest.mark.parametrize("kind", sorted(HOSTILE_FRAMES))
async def test_a_hostile_frame_is_refused_and_the_connection_stays(
    group: int, kind: str, bot: BotProcess, peer: OneBotPeer, db: DbView
) -> None:
    await peer.send_event(peer.group_message(group, ALICE, "之前"))
    await db.wait_for_count(1, group_id=group)
    await peer.send_raw(HOSTILE_FRAMES[kind])
    for i in range(5):  # frames queued right behind the hostile one
        await peer.send_event(peer.group_message(group, ALICE, f"之后 {i}"))
    await db.wait_for_count(6, group_id=group)
    assert peer.connected
    assert "refused a OneBot frame" in bot.tail_log(200) or kind == "echo_5000_digits"


async def test_the_same_api_response_twice_does_not_drop_the_connection(
    group: int, bot: BotProcess, peer: OneBotPeer, db: DbView, fake_llm: FakeOpenAI
) -> None:
    peer.repeat_responses = 2  # every send_group_msg result arrives twice, same echo
    await peer.send_event(peer.group_message(group, ALICE, at_bot("在吗")))
    await peer.wait_for_calls("send_group_msg", count=1, timeout=20)
    await asyncio.sleep(0.5)
    for i in range(5):
        await peer.send_event(peer.group_message(group, ALICE, f"之后 {i}"))
    await db.wait_for_count(6, group_id=group)
    assert peer.connected
    assert "nothing waits for it" in bot.tail_log(200)
