"""Real stickers: collected from members, named by the vision model, sent back as images."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator

import pytest

from tests.e2e.conftest import at_bot, sent_texts, write_group_config
from tests.harness.bot_process import BotProcess
from tests.harness.fake_openai import FakeOpenAI
from tests.harness.onebot_peer import OneBotPeer
from tests.unit.images.local_http import PNG_1X1, LocalHttpServer, Route

pytestmark = pytest.mark.e2e

GROUP, OTHER = 67_000_001, 67_000_002
SUPERUSER, ALICE, BOB = 10001, 47_001, 47_002
STICKERS = """
[chat]
merge_window_s = 0
allow_sticker = true
[routing.cooldown]
chat_cooldown_s = 0
[images]
allow_private_hosts = ["127.0.0.1"]
"""


@pytest.fixture
async def images() -> AsyncIterator[LocalHttpServer]:
    server = LocalHttpServer()
    server.routes["/dog.png"] = Route()
    await server.start()
    yield server
    await server.close()


def sticker_image(url: str, file: str = "7F3A9C.png") -> dict:
    """An image segment as NapCat sends a sticker (animated-face flag and summary)."""
    return {
        "type": "image",
        "data": {"file": file, "sub_type": 1, "summary": "[动画表情]", "url": url},
    }


async def admin(peer: OneBotPeer, group: int, command: str) -> str:
    before = len(peer.sends())
    await peer.send_event(peer.group_message(group, SUPERUSER, command))
    sends = await peer.wait_for_calls("send_msg", "send_group_msg", count=before + 1)
    return sent_texts(sends)[-1]


async def test_member_sticker_is_named_once_and_sent_back_as_an_image(
    bot: BotProcess, peer: OneBotPeer, fake_llm: FakeOpenAI, images: LocalHttpServer
) -> None:
    write_group_config(bot, GROUP, STICKERS)
    write_group_config(bot, OTHER, STICKERS)
    url = images.url("/dog.png")
    # two members send the same sticker (same bytes, different file names) and a photo
    await peer.send_event(peer.group_message(GROUP, ALICE, [sticker_image(url)]))
    await peer.send_event(peer.group_message(GROUP, BOB, [sticker_image(url, "B00B.png")]))
    photo = {"type": "image", "data": {"file": "photo.jpg", "sub_type": 0, "url": url}}
    await peer.send_event(peer.group_message(GROUP, BOB, [photo]))
    await asyncio.sleep(1.0)

    fake_llm.enqueue("狗头｜一只歪着头坏笑的柴犬")  # the vision model's answer
    report = await admin(peer, GROUP, "/pallas sticker describe")
    assert "新描述 1" in report and "合并重复 1" in report
    [vision] = fake_llm.chat_requests()
    assert "image_url" in str(vision.messages)

    listing = await admin(peer, GROUP, "/pallas sticker list")
    assert "狗头" in listing and "群友发 2 次" in listing and "可用" in listing

    fake_llm.enqueue("哈哈哈\n[表情:狗头]")
    first_reply = len(peer.sends())
    await peer.send_event(peer.group_message(GROUP, ALICE, at_bot("给我发个表情")))
    await peer.wait_for_calls("send_msg", "send_group_msg", count=len(peer.sends()) + 2)
    chat = fake_llm.chat_requests()[-1]
    assert "只能用这些表情名：狗头" in chat.system_prompt
    assert sent_texts(peer.sends(GROUP)[-2:-1]) == ["哈哈哈"]
    [segment] = peer.sends(GROUP)[-1].params["message"]  # the sticker, as its own message
    assert segment["type"] == "image"
    payload = segment["data"]["file"]
    assert payload.startswith("base64://")
    assert base64.b64decode(payload.removeprefix("base64://")) == PNG_1X1
    assert all("狗头" not in t for t in sent_texts(peer.sends()[first_reply:]))  # never as text

    # another group: same marker, empty pool → no sticker and no name
    fake_llm.enqueue("好呀\n[表情:狗头]")
    before = len(peer.sends(OTHER))
    await peer.send_event(peer.group_message(OTHER, ALICE, at_bot("发个表情看看")))
    await peer.wait_for_calls("send_msg", "send_group_msg", count=len(peer.sends()) + 1)
    await asyncio.sleep(1.0)
    assert sent_texts(peer.sends(OTHER)[before:]) == ["好呀"]
    assert "表情名" not in fake_llm.chat_requests()[-1].system_prompt

    # an admin's 不可以 on the bot's sticker bans it
    sticker_message = peer.sends(GROUP)[-1].params["message"]
    [sent_id] = [mid for mid, m in peer.messages.items() if m["message"] == sticker_message]
    rejection = [
        {"type": "reply", "data": {"id": str(sent_id)}},
        {"type": "text", "data": {"text": "不可以"}},
    ]
    await peer.send_event(peer.group_message(GROUP, SUPERUSER, rejection))
    await asyncio.sleep(1.5)
    listing = await admin(peer, GROUP, "/pallas sticker list")
    assert "已禁用" in listing


async def test_market_face_is_named_by_its_summary_and_an_admin_can_ban_it(
    bot: BotProcess, peer: OneBotPeer, fake_llm: FakeOpenAI
) -> None:
    write_group_config(bot, GROUP, STICKERS)
    face = {"emoji_package_id": "235125", "emoji_id": "e1f2", "key": "k9", "summary": "[吃瓜]"}
    await peer.send_event(
        peer.group_message(GROUP, ALICE, [{"type": "mface", "data": face}], message_id=9101)
    )
    await asyncio.sleep(1.0)
    report = await admin(peer, GROUP, "/pallas sticker describe")
    assert "新描述 1" in report
    assert fake_llm.chat_requests() == []  # a market face needs no vision call

    fake_llm.enqueue("[表情:吃瓜]")
    before = len(peer.sends())
    await peer.send_event(peer.group_message(GROUP, BOB, at_bot("你怎么看")))
    await peer.wait_for_calls("send_msg", "send_group_msg", count=before + 1)
    assert peer.sends(GROUP)[-1].params["message"] == [{"type": "mface", "data": face}]

    # an admin's 不可以 on the member's own sticker message bans it too
    rejection = [
        {"type": "reply", "data": {"id": "9101"}},
        {"type": "text", "data": {"text": "不可以"}},
    ]
    await peer.send_event(peer.group_message(GROUP, SUPERUSER, rejection))
    await asyncio.sleep(1.5)
    assert "已禁用" in await admin(peer, GROUP, "/pallas sticker list")
    fake_llm.enqueue("嗯\n[表情:吃瓜]")
    before = len(peer.sends())
    await peer.send_event(peer.group_message(GROUP, BOB, at_bot("再发一个")))
    await peer.wait_for_calls("send_msg", "send_group_msg", count=before + 1)
    await asyncio.sleep(1.0)
    assert sent_texts(peer.sends(GROUP)[before:]) == ["嗯"]  # banned: text only
