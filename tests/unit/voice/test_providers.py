"""The TTS providers against fake servers of their API shapes (the OpenAI-compatible
`/audio/speech`, GPT-SoVITS's `/tts`) and edge-tts with its client replaced at the network
boundary; the chain falls over, moves breakers and writes the ledger."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any, ClassVar, cast

import pytest
from pydantic import ValidationError

from pallas.core.clock import FakeClock
from pallas.core.db.repositories.usage import UsageEntry, UsageRepository
from pallas.core.secrets_file import update_secrets
from pallas.core.settings import PallasSettings
from pallas.core.state import MemoryStateStore
from pallas.providers.breaker import Breakers
from pallas.providers.endpoints import BreakerConfig
from pallas.providers.tts import (
    SpeechClient,
    SpeechEndpointConfig,
    check_audio,
    sniff_format,
    speech_key,
    wav_duration,
)
from tests.harness.fake_tts import FakeTts, sine_wav


class Ledger:
    def __init__(self) -> None:
        self.entries: list[UsageEntry] = []

    def record_later(self, entry: UsageEntry) -> None:
        self.entries.append(entry)


@pytest.fixture
async def tts() -> AsyncIterator[FakeTts]:
    server = FakeTts()
    await server.start()
    yield server
    await server.stop()


def openai_provider(tts: FakeTts, name: str = "main", **extra: Any) -> SpeechEndpointConfig:
    return SpeechEndpointConfig.model_validate(
        {"name": name, "kind": "openai", "base_url": tts.base_url, "model": "tts-1",
         "voice": "alloy", "response_format": "wav", "api_key_env": "TTS_KEY", **extra}
    )  # fmt: skip


def sovits_provider(tts: FakeTts) -> SpeechEndpointConfig:
    return SpeechEndpointConfig.model_validate(
        {"name": "sovits", "kind": "gpt_sovits", "base_url": tts.sovits_url,
         "ref_audio_path": "refs/pallas.wav", "prompt_text": "博士，早上好", "prompt_lang": "zh",
         "text_lang": "zh", "response_format": "wav"}
    )  # fmt: skip


def client(ledger: Ledger, clock: FakeClock, **kwargs: Any) -> SpeechClient:
    breakers = Breakers(MemoryStateStore(clock), BreakerConfig(failures=2, open_seconds=60))
    return SpeechClient(PallasSettings(), cast(UsageRepository, ledger), clock, breakers,
                        env={"TTS_KEY": "sk-tts"}, **kwargs)  # fmt: skip


async def test_openai_speech_returns_real_audio_and_is_in_the_ledger(tts: FakeTts) -> None:
    ledger, clock = Ledger(), FakeClock()
    speech = client(ledger, clock)
    result = await speech.synthesize("你好", [openai_provider(tts)], bot_id=1, group_id=2)
    await speech.close()
    assert result.ok and result.format == "wav" and result.provider == "main"
    assert wav_duration(result.audio) > 0
    request = tts.requests[-1]
    assert request.path == "/v1/audio/speech"
    assert request.body == {"model": "tts-1", "input": "你好", "voice": "alloy",
                            "response_format": "wav", "speed": 1.0}  # fmt: skip
    assert request.headers["authorization"] == "Bearer sk-tts"
    [entry] = ledger.entries
    assert (entry.task, entry.model, entry.prompt_tokens, entry.failed, entry.endpoint) == (
        "tts", "openai:tts-1", 2, False, "main")  # fmt: skip


async def test_gpt_sovits_gets_its_reference_settings_and_chinese_numbers(tts: FakeTts) -> None:
    from pallas.features.voice.service import _prepare

    speech = client(Ledger(), FakeClock())
    result = await speech.synthesize("3点见", [sovits_provider(tts)], bot_id=1, group_id=2,
                                     prepare=_prepare)  # fmt: skip
    await speech.close()
    assert result.ok and wav_duration(result.audio) > 0
    body = tts.requests[-1].body
    assert tts.requests[-1].path == "/tts"
    assert body["text"] == "三点见"
    assert (body["ref_audio_path"], body["prompt_text"], body["prompt_lang"]) == (
        "refs/pallas.wav", "博士，早上好", "zh")  # fmt: skip
    assert body["media_type"] == "wav" and body["streaming_mode"] is False


async def test_a_failing_provider_falls_over_to_the_next_and_opens_its_breaker(
    tts: FakeTts,
) -> None:
    ledger, clock = Ledger(), FakeClock()
    speech = client(ledger, clock)
    dead = openai_provider(tts, "dead", base_url="http://127.0.0.1:9/v1")
    chain = [dead, sovits_provider(tts)]
    for _ in range(2):
        result = await speech.synthesize("你好", chain, bot_id=1, group_id=2)
        assert result.ok and result.provider == "sovits"
        assert result.attempts == ("dead:connection_error", "sovits:ok")
    # two failures in a row: "dead" is skipped while its breaker is open
    result = await speech.synthesize("你好", chain, bot_id=1, group_id=2)
    assert result.attempts == ("sovits:ok",)
    await speech.close()
    assert [e.failed for e in ledger.entries if e.endpoint == "dead"] == [True, True]


async def test_every_provider_failing_is_a_result_not_an_exception(tts: FakeTts) -> None:
    tts.fail_with(500)
    speech = client(Ledger(), FakeClock())
    result = await speech.synthesize("你好", [openai_provider(tts)], bot_id=1, group_id=2)
    assert (result.ok, result.error, result.attempts) == (False, "server_error",
                                                          ("main:server_error",))  # fmt: skip
    tts.reset()
    tts.answer_empty()  # a WAV without samples is no voice
    result = await speech.synthesize("你好", [openai_provider(tts)], bot_id=1, group_id=2)
    assert (result.ok, result.error) == (False, "bad_audio")
    assert (await speech.synthesize("你好", [], bot_id=1, group_id=2)).error == "no_provider"
    await speech.close()


class FakeCommunicate:
    """edge-tts's `Communicate`, answering from here instead of Microsoft's websocket."""

    calls: ClassVar[list[tuple[str, str, dict[str, Any]]]] = []
    fail = False

    def __init__(self, text: str, voice: str, **kwargs: Any) -> None:
        FakeCommunicate.calls.append((text, voice, kwargs))

    async def stream(self) -> AsyncIterator[Mapping[str, Any]]:
        if FakeCommunicate.fail:
            raise ConnectionResetError("websocket closed")
        audio = b"ID3\x04\x00\x00\x00\x00\x00\x00" + b"\xff\xf3" + b"\x00" * 200
        yield {"type": "WordBoundary", "offset": 0, "duration": 1, "text": "你好"}
        yield {"type": "audio", "data": audio[:100]}
        yield {"type": "audio", "data": audio[100:]}


async def test_edge_tts_through_its_client() -> None:
    edge = SpeechEndpointConfig(name="edge", kind="edge_tts", voice="zh-CN-XiaoyiNeural",
                                rate="+10%")  # fmt: skip
    speech = client(Ledger(), FakeClock(), communicate=FakeCommunicate)
    result = await speech.synthesize("你好", [edge], bot_id=1, group_id=2)
    assert result.ok and result.format == "mp3" and len(result.audio) == 212
    text, voice, kwargs = FakeCommunicate.calls[-1]
    assert (text, voice, kwargs["rate"], kwargs["pitch"]) == ("你好", "zh-CN-XiaoyiNeural",
                                                              "+10%", "+0Hz")  # fmt: skip
    FakeCommunicate.fail = True
    failed = await speech.synthesize("你好", [edge], bot_id=1, group_id=2)
    FakeCommunicate.fail = False
    assert (failed.ok, failed.error) == (False, "error")


def test_edge_tts_package_has_the_client_we_call() -> None:
    import inspect

    import edge_tts

    parameters = inspect.signature(edge_tts.Communicate).parameters
    assert {"text", "voice", "rate", "pitch", "connect_timeout", "receive_timeout"} <= set(
        parameters
    )
    assert inspect.isasyncgenfunction(edge_tts.Communicate.stream)


def test_keys_come_from_the_environment_never_from_config() -> None:
    with pytest.raises(ValidationError, match="api_key in a config file is refused"):
        SpeechEndpointConfig.model_validate(
            {"name": "x", "kind": "openai", "base_url": "https://a/v1", "model": "m",
             "voice": "v", "api_key": "sk-secret"}
        )  # fmt: skip
    settings = PallasSettings(openai_api_key="sk-chat", pallas_data_dir=Path("/nonexistent"))
    assert speech_key(settings, "OPENAI_API_KEY", {}) == "sk-chat"
    assert speech_key(settings, "SILICONFLOW_API_KEY", {"SILICONFLOW_API_KEY": " sk-sf "}) == (
        "sk-sf")  # fmt: skip
    assert speech_key(settings, "", {"X": "y"}) == ""
    assert "sk-" not in repr(SpeechEndpointConfig(name="e", kind="edge_tts"))


def test_a_key_saved_in_the_console_is_found_and_the_environment_wins(tmp_path: Path) -> None:
    """Keys live where the chat providers' keys live: the environment, or the secrets file
    the console's 模型 page writes (`key.<VARIABLE>` for a backup endpoint's key)."""
    update_secrets(tmp_path, {"openai_api_key": "sk-saved", "key.SILICONFLOW_API_KEY": "sk-sf"})
    settings = PallasSettings(openai_api_key="", pallas_data_dir=tmp_path)
    assert speech_key(settings, "OPENAI_API_KEY", {}) == "sk-saved"
    assert speech_key(settings, "SILICONFLOW_API_KEY", {}) == "sk-sf"
    assert speech_key(settings, "SILICONFLOW_API_KEY", {"SILICONFLOW_API_KEY": "sk-env"}) == (
        "sk-env")  # fmt: skip
    assert speech_key(settings, "OTHER_KEY", {}) == ""


def test_config_needs_what_each_family_needs() -> None:
    with pytest.raises(ValidationError, match="ref_audio_path"):
        SpeechEndpointConfig(name="s", kind="gpt_sovits", base_url="http://127.0.0.1:9880")
    with pytest.raises(ValidationError, match="model and voice"):
        SpeechEndpointConfig(name="o", kind="openai", base_url="https://a/v1")
    assert SpeechEndpointConfig(name="e", kind="edge_tts").wants_chinese_numbers is False


def test_audio_sniffing() -> None:
    assert sniff_format(sine_wav(0.1)) == "wav" and check_audio(sine_wav(0.1)) == "wav"
    assert sniff_format(b"OggS....") == "ogg"
    assert sniff_format(b"\x02#!SILK_V3....") == "silk"
    for bad in (b"", b'{"error": "x"}', sine_wav(0.0)):
        with pytest.raises(Exception, match="bad_audio"):
            check_audio(bad)
