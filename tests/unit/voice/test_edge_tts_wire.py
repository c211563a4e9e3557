"""edge-tts for real, with only its network boundary replaced: `aiohttp`'s websocket to
Microsoft's read-aloud service answers here, in the service's framing (text frames with a Path
header, binary audio frames with a two-byte header length). What edge-tts sends (the voice, the
text in its SSML) and what Pallas makes of the answer are checked."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import aiohttp
import pytest

from pallas.core.clock import FakeClock
from pallas.providers.tts import EdgeSpeech, SpeechEndpointConfig, SpeechError, sniff_format
from tests.unit.voice.test_providers import Ledger, client

MP3_FRAME = b"\xff\xf3\x64\xc4" + b"\x00" * 140  # an MPEG-2 layer III frame header + payload


@dataclass
class Frame:
    type: aiohttp.WSMsgType
    data: Any


def audio_frame(data: bytes) -> Frame:
    """Two bytes of header length, the headers (each line ending in CRLF), the audio."""
    headers = b"X-RequestId:1\r\nContent-Type:audio/mpeg\r\nPath:audio\r\n"
    return Frame(aiohttp.WSMsgType.BINARY, len(headers).to_bytes(2, "big") + headers + data)


class FakeSocket:
    def __init__(self, frames: list[Frame]) -> None:
        self.frames = frames
        self.sent: list[str] = []

    async def send_str(self, text: str) -> None:
        self.sent.append(text)

    async def __aenter__(self) -> FakeSocket:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    def __aiter__(self) -> AsyncIterator[Frame]:
        return self._frames()

    async def _frames(self) -> AsyncIterator[Frame]:
        for frame in self.frames:
            yield frame


def serve(monkeypatch: pytest.MonkeyPatch, frames: list[Frame]) -> FakeSocket:
    socket = FakeSocket(frames)
    urls: list[str] = []

    def ws_connect(self: aiohttp.ClientSession, url: str, **kwargs: Any) -> FakeSocket:
        urls.append(url)
        return socket

    monkeypatch.setattr(aiohttp.ClientSession, "ws_connect", ws_connect)
    return socket


EDGE = SpeechEndpointConfig(name="edge", kind="edge_tts", voice="zh-CN-XiaoxiaoNeural",
                            rate="+5%")  # fmt: skip


async def test_edge_tts_speaks_through_its_websocket(monkeypatch: pytest.MonkeyPatch) -> None:
    socket = serve(monkeypatch, [
        Frame(aiohttp.WSMsgType.TEXT, "X-RequestId:1\r\nPath:turn.start\r\n\r\n{}"),
        audio_frame(MP3_FRAME),
        audio_frame(MP3_FRAME),
        Frame(aiohttp.WSMsgType.TEXT, "X-RequestId:1\r\nPath:turn.end\r\n\r\n{}"),
    ])  # fmt: skip
    speech = client(Ledger(), FakeClock())
    result = await speech.synthesize("你好呀", [EDGE], bot_id=1, group_id=2)
    assert result.ok, result
    assert result.audio == MP3_FRAME * 2 and sniff_format(result.audio) == "mp3"
    config, ssml = socket.sent
    assert "Path:speech.config" in config and "audio-24khz-48kbitrate-mono-mp3" in config
    assert "你好呀" in ssml and "XiaoxiaoNeural" in ssml and "+5%" in ssml


async def test_edge_tts_without_audio_is_a_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    serve(monkeypatch, [Frame(aiohttp.WSMsgType.TEXT, "X-RequestId:1\r\nPath:turn.end\r\n\r\n")])
    with pytest.raises(SpeechError, match="NoAudioReceived"):
        await EdgeSpeech(EDGE).synthesize("你好")
