"""Private chat as members meet it: a friend DMs the bot and is answered in private; what they
tell it there stays theirs (never in a group request, there when they ask in private later);
a stranger is not answered until the operator allows strangers; a flood of DMs costs at most
the member limit.

Each runs the real bot process against a OneBot v11 peer over WebSocket and a fake
OpenAI-compatible model.
"""

from __future__ import annotations

import asyncio

import pytest

from tests.e2e.conftest import DbView, sent_texts
from tests.harness.bot_process import BotProcess
from tests.harness.fake_openai import FakeOpenAI, RecordedRequest
from tests.harness.onebot_peer import ApiCall, OneBotPeer

pytestmark = pytest.mark.e2e

GROUP = 66_000_001
ALICE, BOB, STRANGER = 53_001, 53_002, 53_009


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
    seen = len(fake_llm.chat_requests())
    await peer.send_event(peer.private_message(user, text, sub_type=sub_type))
    deadline = asyncio.get_running_loop().time() + 20
    while asyncio.get_running_loop().time() < deadline:
        for request in fake_llm.chat_requests()[seen:]:
            last = request.messages[-1] if request.messages else {}
            if last.get("role") == "user" and str(last.get("content", "")).rstrip().endswith(text):
                return request
        await asyncio.sleep(0.05)
    raise TimeoutError(f"no chat request for {text!r}")


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
