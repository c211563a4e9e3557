"""Issue 50: the persona speaks. Through the real bot process and a OneBot peer, with a fake
TTS server that synthesises real WAV audio: "牛牛说 你好" → one `record` segment whose audio
decodes to a duration above zero; a failing provider → the text; the daily budget spent →
the text, with the reason in the route log (`/pallas why`)."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from pallas.providers.tts import wav_duration
from tests.e2e.conftest import BOT_ID, running_bot, sent_texts
from tests.harness.bot_process import BotProcess
from tests.harness.fake_openai import FakeOpenAI
from tests.harness.fake_tts import FakeTts
from tests.harness.onebot_peer import OneBotPeer

pytestmark = pytest.mark.e2e

GROUP = 700_050
MEMBER = 50_001
SUPERUSER = 10001


@pytest.fixture
async def fake_tts() -> AsyncIterator[FakeTts]:
    server = FakeTts()
    await server.start()
    yield server
    await server.stop()


def voice_defaults(tts: FakeTts, daily_calls: int) -> str:
    return f"""
[voice]
enabled = true
daily_calls = {daily_calls}
reply_to_voice = true

[[voice.providers]]
name = "fake"
kind = "openai"
base_url = "{tts.base_url}"
api_key_env = "OPENAI_API_KEY"
model = "tts-1"
voice = "alloy"
response_format = "wav"
timeout_s = 5
"""


@pytest.fixture
async def voice_peer(
    tmp_path: Path, fake_llm: FakeOpenAI, fake_tts: FakeTts
) -> AsyncIterator[OneBotPeer]:
    def prepare(process: BotProcess) -> None:
        default = process.config_dir / "groups" / "default.toml"
        with default.open("a", encoding="utf-8") as out:
            out.write(voice_defaults(fake_tts, daily_calls=3))

    async with running_bot(tmp_path / "bot", fake_llm, prepare=prepare) as bot:
        peer = OneBotPeer(bot.ws_url, self_id=BOT_ID, access_token=bot.access_token)
        await peer.connect()
        yield peer
        await peer.close()


def record_seconds(segment: dict[str, Any]) -> float:
    assert segment["type"] == "record"
    file = segment["data"]["file"]
    assert file.startswith("base64://")
    return wav_duration(base64.b64decode(file.removeprefix("base64://")))


async def test_speak_command_fallback_and_budget(
    voice_peer: OneBotPeer, fake_tts: FakeTts, fake_llm: FakeOpenAI
) -> None:
    peer = voice_peer
    # 1. spoken: one record segment with real audio, and the chat model is not asked
    await peer.send_event(peer.group_message(GROUP, MEMBER, "牛牛说 你好"))
    [call] = await peer.wait_for_calls("send_group_msg")
    segments = call.params["message"]
    assert isinstance(segments, list) and len(segments) == 1
    assert record_seconds(segments[0]) > 0
    assert fake_tts.requests[-1].body["input"] == "你好"
    assert fake_tts.requests[-1].headers["authorization"] == "Bearer sk-test"

    # 2. the provider fails: the words go out as text
    fake_tts.fail_with(500)
    await peer.send_event(peer.group_message(GROUP, MEMBER + 1, "牛牛说 晚上好"))
    calls = await peer.wait_for_calls("send_group_msg", count=2)
    assert sent_texts(calls)[-1] == "晚上好"
    fake_tts.reset()

    # a canned empty WAV is no voice either: text
    fake_tts.answer_empty()
    await peer.send_event(peer.group_message(GROUP, MEMBER + 3, "牛牛说 好梦"))
    calls = await peer.wait_for_calls("send_group_msg", count=3)
    assert sent_texts(calls)[-1] == "好梦"
    fake_tts.reset()

    # 3. three calls today (daily_calls = 3): the budget is spent, text only, no TTS request
    asked = len(fake_tts.requests)
    await peer.send_event(peer.group_message(GROUP, MEMBER + 2, "牛牛说 明天见"))
    calls = await peer.wait_for_calls("send_group_msg", count=4)
    assert sent_texts(calls)[-1] == "明天见"
    assert all(s["type"] == "text" for s in calls[-1].params["message"])
    assert len(fake_tts.requests) == asked
    assert fake_llm.chat_requests() == []  # none of them reached the chat

    # the route log says why
    await peer.send_event(peer.group_message(GROUP, SUPERUSER, "/pallas why 5"))
    calls = await peer.wait_for_calls("send_msg", "send_group_msg", count=5)
    why = sent_texts(calls)[-1]
    assert "voice_command:command" in why
    assert "tts_failed:server_error" in why and "tts_failed:bad_audio" in why
    assert "budget_calls" in why and "→ text" in why


async def test_a_voice_message_is_answered_in_voice(
    voice_peer: OneBotPeer, fake_tts: FakeTts, fake_llm: FakeOpenAI
) -> None:
    """A member's voice message (here a DM; transcription off, so "[语音]") is answered with the
    persona's short reply spoken; a failing provider sends the same reply as text."""
    peer = voice_peer
    voice_message = [{"type": "record", "data": {"file": "a.amr", "url": "http://127.0.0.1:9/a"}}]
    fake_llm.enqueue("听到啦～")
    await peer.send_event(peer.private_message(MEMBER, voice_message))
    [call] = await peer.wait_for_calls("send_private_msg")
    [segment] = call.params["message"]
    assert record_seconds(segment) > 0
    assert fake_tts.requests[-1].body["input"] == "听到啦～"

    fake_tts.fail_with(500)
    fake_llm.enqueue("还是听到啦")
    await peer.send_event(peer.private_message(MEMBER, voice_message))
    calls = await peer.wait_for_calls("send_private_msg", count=2)
    assert sent_texts(calls)[-1] == "还是听到啦"
