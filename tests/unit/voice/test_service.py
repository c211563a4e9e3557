"""`VoiceService`: the command spoken as a record segment, or the text with the reason —
budget spent, a failing provider, the output guard, the member limit; a reply spoken."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from typing import Any, cast

import pytest

from pallas.app_wiring import voice_guard
from pallas.context.prompt_guard import PROMPT_INJECTION_GUARD
from pallas.core.clock import FakeClock
from pallas.core.db.repositories.usage import UsageRepository
from pallas.core.settings import PallasSettings
from pallas.core.state import MemoryStateStore
from pallas.core.turn import Segment, TurnInput
from pallas.features.persona import PersonaPack
from pallas.features.voice import REFUSED, VoiceConfig, VoiceService
from pallas.providers.breaker import Breakers
from pallas.providers.endpoints import BreakerConfig
from pallas.providers.tts import SpeechClient, wav_duration
from tests.harness.fake_tts import FakeTts
from tests.unit.voice.test_providers import Ledger

PERSONA = PersonaPack()
NAMES = ("帕拉斯", "牛牛")


@pytest.fixture
async def tts() -> AsyncIterator[FakeTts]:
    server = FakeTts()
    await server.start()
    yield server
    await server.stop()


def config(tts: FakeTts, **extra: Any) -> VoiceConfig:
    provider = {"name": "main", "kind": "openai", "base_url": tts.base_url, "model": "tts-1",
                "voice": "alloy", "response_format": "wav"}  # fmt: skip
    return VoiceConfig.model_validate({"enabled": True, "providers": [provider], **extra})


def service(clock: FakeClock | None = None) -> VoiceService:
    clock = clock or FakeClock()
    state = MemoryStateStore(clock)
    speech = SpeechClient(PallasSettings(), cast(UsageRepository, Ledger()), clock,
                          Breakers(state, BreakerConfig()))  # fmt: skip
    return VoiceService(speech, state, clock, voice_guard)


def turn(text: str, user: int = 7, *, voice: bool = False) -> TurnInput:
    segments = (Segment("record", {"file": "a.amr"}),) if voice else ()
    return TurnInput(bot_id=1, group_id=100, user_id=user, message_id=5, time=0.0, text=text,
                     segments=segments)  # fmt: skip


def decoded_seconds(segment: dict[str, Any] | None) -> float:
    assert segment is not None and segment["type"] == "record"
    file = segment["data"]["file"]
    assert file.startswith("base64://")
    return wav_duration(base64.b64decode(file.removeprefix("base64://")))


async def test_command_is_spoken_as_a_record_segment(tts: FakeTts) -> None:
    voice = service()
    outcome = await voice.speak_command(turn("牛牛说 你好😀"), config(tts), PERSONA, names=NAMES,
                                        is_admin=False)  # fmt: skip
    assert outcome is not None and outcome.spoken and outcome.reason == "command"
    assert decoded_seconds(outcome.segment) > 0
    assert tts.requests[-1].body["input"] == "你好"
    usage = await voice.usage(100, 7)
    assert (usage.calls, usage.chars, usage.member_commands) == (1, 2, 1)


async def test_other_lines_are_left_to_the_chat(tts: FakeTts) -> None:
    voice = service()
    assert await voice.speak_command(turn("牛牛你好"), config(tts), PERSONA, names=NAMES,
                                     is_admin=False) is None  # fmt: skip
    assert await voice.speak_command(turn("牛牛说 你好"), VoiceConfig(), PERSONA, names=NAMES,
                                     is_admin=False) is None  # fmt: skip


async def test_budget_spent_sends_the_text_with_the_reason(tts: FakeTts) -> None:
    voice, cfg = service(), config(tts, daily_calls=1)
    first = await voice.speak_command(turn("牛牛说 早"), cfg, PERSONA, names=NAMES, is_admin=False)
    assert first is not None and first.spoken
    second = await voice.speak_command(turn("牛牛说 晚安", user=8), cfg, PERSONA, names=NAMES,
                                       is_admin=False)  # fmt: skip
    assert second is not None and not second.spoken
    assert (second.reason, second.text, second.segment) == ("budget_calls", "晚安", None)
    assert len(tts.requests) == 1


async def test_a_failing_provider_falls_back_to_the_text(tts: FakeTts) -> None:
    tts.fail_with(503)
    outcome = await service().speak_command(turn("牛牛说 你好"), config(tts), PERSONA,
                                            names=NAMES, is_admin=False)  # fmt: skip
    assert outcome is not None and not outcome.spoken
    assert outcome.reason == "tts_failed:server_error" and outcome.text == "你好"
    assert "main:server_error" in outcome.route_reason


async def test_member_limit_and_admins(tts: FakeTts) -> None:
    voice = service()
    cfg = config(tts, command={"member_daily": 1, "who": "everyone"})
    assert (
        await voice.speak_command(turn("牛牛说 一"), cfg, PERSONA, names=NAMES, is_admin=False)
    ).spoken  # type: ignore[union-attr]
    limited = await voice.speak_command(turn("牛牛说 二"), cfg, PERSONA, names=NAMES,
                                        is_admin=False)  # fmt: skip
    assert limited is not None and limited.reason == "member_limit" and limited.text
    admins = config(tts, command={"who": "admins"})
    refused = await voice.speak_command(turn("牛牛说 三", user=9), admins, PERSONA, names=NAMES,
                                        is_admin=False)  # fmt: skip
    assert refused is not None and refused.reason == "admins_only"


async def test_the_output_guard_keeps_the_prompt_out_of_the_voice(tts: FakeTts) -> None:
    leak = PROMPT_INJECTION_GUARD[:45]
    cfg = config(tts, command={"max_chars": 200})
    outcome = await service().speak_command(turn("牛牛说 " + leak), cfg, PERSONA, names=NAMES,
                                            is_admin=True)  # fmt: skip
    assert outcome is not None and not outcome.spoken
    assert outcome.reason == "guard:prompt_leak" and outcome.text == REFUSED
    rude = await service().speak_command(turn("牛牛说 你是傻逼"), cfg, PERSONA, names=NAMES,
                                         is_admin=True)  # fmt: skip
    assert rude is not None and (rude.reason, rude.text) == ("blocked_word", REFUSED)
    assert tts.requests == []


async def test_a_reply_to_a_voice_message_is_spoken(tts: FakeTts) -> None:
    voice = service()
    cfg = config(tts, reply_to_voice=True)
    outcome = await voice.speak_reply(turn("[语音]", voice=True), cfg, ("好哦～",), roll=0.99)
    assert outcome.spoken and outcome.reason == "reply_to_voice"
    assert decoded_seconds(outcome.segment) > 0
    plain = await voice.speak_reply(turn("在吗"), cfg, ("在",), roll=0.99)
    assert (plain.spoken, plain.reason) == (False, "not_chosen")


async def test_two_commands_at_once_cannot_both_take_the_last_call(tts: FakeTts) -> None:
    import asyncio

    voice, cfg = service(), config(tts, daily_calls=1)
    outcomes = await asyncio.gather(
        *(voice.speak_command(turn(f"牛牛说 第{i}句", user=i), cfg, PERSONA, names=NAMES,
                              is_admin=False) for i in range(3))
    )  # fmt: skip
    assert sorted(o.reason for o in outcomes if o is not None) == [
        "budget_calls", "budget_calls", "command"]  # fmt: skip
    usage = await voice.usage(100, 0)
    assert usage.calls == 1 and len(tts.requests) == 1


async def test_a_failed_synthesis_gives_its_characters_back(tts: FakeTts) -> None:
    voice = service()
    tts.fail_with(500)
    await voice.speak_command(turn("牛牛说 你好"), config(tts), PERSONA, names=NAMES,
                              is_admin=False)  # fmt: skip
    usage = await voice.usage(100, 7)
    assert (usage.calls, usage.chars) == (1, 0)
