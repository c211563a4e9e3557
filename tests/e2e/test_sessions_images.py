"""Long sessions and images, as a group meets them: compression, vision turns, safe downloads."""

from __future__ import annotations

import asyncio
import base64
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from pallas.context.processors import TIMELINE_IMAGES_CAPTION
from pallas.core.db.engine import session_factory
from pallas.core.db.repositories.snapshots import InjectionSnapshot, SnapshotRepository
from tests.e2e.conftest import BOT_ID, DbView, at_bot, write_group_config
from tests.harness.bot_process import BotProcess
from tests.harness.fake_openai import FakeOpenAI, RecordedRequest, Scripted
from tests.harness.onebot_peer import OneBotPeer
from tests.unit.images.local_http import PNG_1X1, LocalHttpServer, Route

pytestmark = pytest.mark.e2e
SHARED_BOT = True  # one bot and one SummarisingLLM for the module; each test has its own group

ALICE, BOB, CAROL = 42_001, 42_002, 42_003
SUMMARY_TEXT = "用户一直在问吉他练习，卡在F和弦，帕拉斯建议每天慢练十分钟，约好周末汇报进度。"

FAST = """
[chat]
merge_window_s = 0

[routing.cooldown]
chat_cooldown_s = 0
"""
VISION = '\n[models."gpt-4o-mini"]\nsupports_images = true\n'
ALLOW_LOCAL = '\n[images]\nallow_private_hosts = ["127.0.0.1"]\n'


class SummarisingLLM(FakeOpenAI):
    """The fake server, answering the session summariser's requests with a real summary."""

    def __init__(self) -> None:
        super().__init__()
        self.summary_requests: list[dict[str, Any]] = []

    def reset(self, default_reply: str = "好哦") -> None:
        super().reset(default_reply)
        self.summary_requests = []

    def _completion(self, body: dict[str, Any], item: Scripted) -> dict[str, Any]:  # type: ignore[override]
        system = " ".join(
            str(m.get("content")) for m in body.get("messages", []) if m.get("role") == "system"
        )
        if "对话记录整理员" in system:
            self.summary_requests.append(body)
            item = Scripted(text=SUMMARY_TEXT)
        return FakeOpenAI._completion(body, item)


@pytest.fixture(scope="module")
async def module_llm() -> AsyncIterator[FakeOpenAI]:
    server = SummarisingLLM()
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
async def images() -> AsyncIterator[LocalHttpServer]:
    server = LocalHttpServer()
    for path in ("/cat.png", "/quoted.png", "/timeline.png", "/old.png"):
        server.routes[path] = Route()
    await server.start()
    yield server
    await server.close()


def chat_turns(fake: FakeOpenAI) -> list[RecordedRequest]:
    """Reply requests only (not summaries, descriptions or other background work)."""
    return [r for r in fake.chat_requests() if "【回复形状与输出契约】" in r.system_prompt]


async def ask(
    peer: OneBotPeer, fake: FakeOpenAI, group: int, message: list[dict[str, Any]], **kw: Any
) -> RecordedRequest:
    """Send one @bot message and wait for the reply request it causes."""
    before = len(chat_turns(fake))
    sends = len(peer.sends(group))
    await peer.send_event(peer.group_message(group, kw.pop("user", ALICE), message, **kw))
    deadline = time.monotonic() + 15
    while len(chat_turns(fake)) <= before or len(peer.sends(group)) <= sends:
        assert time.monotonic() < deadline, "no reply"
        await asyncio.sleep(0.05)
    return chat_turns(fake)[before]


def image_segment(url: str) -> dict[str, Any]:
    return {"type": "image", "data": {"file": url.rsplit("/", 1)[-1], "url": url}}


def image_urls(message: dict[str, Any]) -> list[str]:
    content = message["content"]
    if isinstance(content, str):
        return []
    return [b["image_url"]["url"] for b in content if b.get("type") == "image_url"]


async def latest_snapshot(bot: BotProcess, db: DbView, group: int) -> InjectionSnapshot:
    snapshots = SnapshotRepository(session_factory(db.engine))
    found: list[InjectionSnapshot] = []

    async def saved() -> bool:
        found[:] = await snapshots.latest(group, bot_id=BOT_ID)
        return bool(found)

    await db.wait_for(saved, what="an injection snapshot")
    return found[0]


# --------------------------------------------------------------------------- compression


async def test_thirty_turns_get_compressed_and_the_summary_leads_the_next_request(
    group: int, bot: BotProcess, peer: OneBotPeer, fake_llm: SummarisingLLM, db: DbView
) -> None:
    write_group_config(bot, group, FAST)
    for i in range(1, 31):
        await ask(peer, fake_llm, group, at_bot(f"第{i}个问题：吉他第{i}课怎么练？"))

    async def summarised() -> bool:
        return await db.chat_sessions.latest_summary(BOT_ID, group, ALICE) is not None

    await db.wait_for(summarised, what="the session summary row")
    rows = await db.chat_sessions.all_for_user(BOT_ID, group, ALICE)
    assert [r.content for r in rows if r.is_summary] == ["【此前对话摘要】" + SUMMARY_TEXT]
    assert len(rows) < 60  # 60 turns were appended; the oldest ones are gone
    assert not any("第1个问题" in r.content for r in rows)
    assert len(fake_llm.summary_requests) == 1  # the 600 s cooldown holds after that
    transcript = fake_llm.summary_requests[0]["messages"][-1]["content"]
    assert "第1个问题" in transcript and "第30个问题" not in transcript

    request = await ask(peer, fake_llm, group, at_bot("那我周末给你汇报？"))
    assert request.messages[0]["role"] == "system"
    first_history = request.messages[1]
    assert first_history["role"] == "user"
    assert first_history["content"].startswith("【此前对话摘要】")
    assert SUMMARY_TEXT in first_history["content"]
    assert "第30个问题" in json.dumps(request.messages, ensure_ascii=False)
    assert "第1个问题" not in json.dumps(request.messages, ensure_ascii=False)


# --------------------------------------------------------------------------- vision turns


async def test_vision_model_gets_the_image_as_a_data_url_block(
    group: int,
    bot: BotProcess,
    peer: OneBotPeer,
    fake_llm: FakeOpenAI,
    db: DbView,
    images: LocalHttpServer,
) -> None:
    write_group_config(bot, group, FAST + VISION + ALLOW_LOCAL)
    url = images.url("/cat.png")
    request = await ask(peer, fake_llm, group, [*at_bot("这是什么"), image_segment(url)])

    current = request.messages[-1]
    [data_url] = image_urls(current)
    assert data_url.startswith("data:image/png;base64,")
    assert base64.b64decode(data_url.split(",", 1)[1]) == PNG_1X1
    assert "这是什么 [图片]" in json.dumps(current, ensure_ascii=False)
    assert images.paths() == ["/cat.png"]

    snapshot = await latest_snapshot(bot, db, group)
    stored = json.dumps(snapshot.data["request"], ensure_ascii=False)
    assert "data:image/png;sha256=" in stored and "base64" not in stored

    async def session_has_placeholder() -> bool:
        rows = await db.chat_sessions.all_for_user(BOT_ID, group, ALICE)
        return any(f"[图片]:url={url}" in r.content for r in rows if r.role == "user")

    await db.wait_for(session_has_placeholder, what="the image placeholder in the session")


async def test_picture_sent_right_after_the_question_is_seen_with_it(
    group: int, bot: BotProcess, peer: OneBotPeer, fake_llm: FakeOpenAI, images: LocalHttpServer
) -> None:
    """QQ users often send "@牛牛 这是啥" and then the picture as its own message."""
    merge = "\n[chat]\nmerge_window_s = 1.5\n"
    write_group_config(bot, group, VISION + ALLOW_LOCAL + merge)
    await peer.send_event(peer.group_message(group, BOB, at_bot("这是啥")))
    await asyncio.sleep(0.3)
    picture = [image_segment(images.url("/cat.png"))]
    await peer.send_event(peer.group_message(group, BOB, picture))
    await peer.wait_for_calls("send_group_msg")
    [request] = chat_turns(fake_llm)  # one turn for both messages
    current = request.messages[-1]
    assert "这是啥" in json.dumps(current, ensure_ascii=False)
    [data_url] = image_urls(current)
    assert base64.b64decode(data_url.split(",", 1)[1]) == PNG_1X1
    assert images.paths() == ["/cat.png"]


async def test_text_model_sees_a_marker_and_nothing_is_downloaded(
    group: int, bot: BotProcess, peer: OneBotPeer, fake_llm: FakeOpenAI, images: LocalHttpServer
) -> None:
    write_group_config(bot, group, FAST + ALLOW_LOCAL)
    message = [*at_bot("这是什么"), image_segment(images.url("/cat.png"))]
    request = await ask(peer, fake_llm, group, message)
    current = request.messages[-1]
    assert isinstance(current["content"], str) and "这是什么 [图片]" in current["content"]
    assert "image_url" not in json.dumps(request.messages)
    await asyncio.sleep(0.3)
    assert images.requests == []


@pytest.mark.parametrize(
    ("host", "reason"),
    [("127.0.0.1", "loopback"), ("localhost", "loopback"), ("10.0.0.1", "private")],
)
async def test_private_image_urls_are_never_fetched(
    group: int,
    bot: BotProcess,
    peer: OneBotPeer,
    fake_llm: FakeOpenAI,
    db: DbView,
    images: LocalHttpServer,
    host: str,
    reason: str,
) -> None:
    write_group_config(bot, group, FAST + VISION)  # a vision model, no allowance
    url = images.url("/cat.png", host=host)
    started = time.monotonic()
    request = await ask(peer, fake_llm, group, [*at_bot("看看这个"), image_segment(url)])
    assert time.monotonic() - started < 8  # refused up front, not a 10 s connect timeout
    assert "image_url" not in json.dumps(request.messages)
    snapshot = await latest_snapshot(bot, db, group)
    [failure] = snapshot.data["vision"]["failed"]
    assert failure["reason"].startswith("blocked_address") and reason in failure["reason"]
    assert images.requests == []
    assert len(peer.sends(group)) >= 1  # the turn went on without the image


async def test_quoted_image_is_the_current_image_and_recognition_skips_the_timeline(
    group: int,
    bot: BotProcess,
    peer: OneBotPeer,
    fake_llm: FakeOpenAI,
    db: DbView,
    images: LocalHttpServer,
) -> None:
    write_group_config(bot, group, FAST + VISION + ALLOW_LOCAL)
    quoted_id = -1_234_567_890_123
    await peer.send_event(
        peer.group_message(group, CAROL, [image_segment(images.url("/timeline.png"))])
    )
    await peer.send_event(
        peer.group_message(
            group, BOB, [image_segment(images.url("/quoted.png"))], message_id=quoted_id
        )
    )
    await db.wait_for_count(2, group_id=group)

    quote = [{"type": "reply", "data": {"id": str(quoted_id)}}, *at_bot("这是谁")]
    request = await ask(peer, fake_llm, group, quote)
    assert len(image_urls(request.messages[-1])) == 1  # the quoted picture, as the current one
    assert sum(len(image_urls(m)) for m in request.messages) == 1  # no timeline images
    assert sorted(images.paths()) == ["/quoted.png"]

    request = await ask(peer, fake_llm, group, at_bot("刚才大家发的图好看吗"))
    # one user message of timeline images (the formatter may merge it into the current one)
    sent = [u for m in request.messages for u in image_urls(m)]
    assert len(sent) == 2 and all(u.startswith("data:image/png;base64,") for u in sent)
    assert TIMELINE_IMAGES_CAPTION in json.dumps(request.messages, ensure_ascii=False)
    assert sorted(set(images.paths())) == ["/quoted.png", "/timeline.png"]


async def test_quoted_message_missing_from_the_store_comes_from_get_msg(
    group: int, bot: BotProcess, peer: OneBotPeer, fake_llm: FakeOpenAI, images: LocalHttpServer
) -> None:
    write_group_config(bot, group, FAST + VISION + ALLOW_LOCAL)
    unseen_id = -42
    peer.group_message(  # known to the OneBot side only: never delivered as an event
        group, BOB, [image_segment(images.url("/old.png"))], message_id=unseen_id
    )
    quote = [{"type": "reply", "data": {"id": str(unseen_id)}}, *at_bot("这张图怎么样")]
    request = await ask(peer, fake_llm, group, quote)
    assert len(image_urls(request.messages[-1])) == 1
    assert images.paths() == ["/old.png"]
    asked = [c.params.get("message_id") for c in peer.calls_of("get_msg")]
    assert asked and all(int(m) == unseen_id for m in asked)
