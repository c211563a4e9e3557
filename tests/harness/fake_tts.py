"""A small TTS server on 127.0.0.1 for tests: the OpenAI-compatible `/v1/audio/speech` and the
GPT-SoVITS API's `/tts`, answering with real audio.

Every answer is a WAV synthesised here (a sine, 0.1 s per character of the text, 16 kHz mono,
16-bit) so a test can decode it to a duration above zero; `fail_with(status)` makes every
request fail, `answer_empty()` answers a WAV without samples (which the bot must refuse).
Each request's JSON body is recorded.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import math
import struct
import wave
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

from tests.harness.fake_openai import free_port

RATE = 16_000


def sine_wav(seconds: float, *, frequency: float = 440.0, rate: int = RATE) -> bytes:
    """A mono 16-bit WAV of a sine tone."""
    frames = int(seconds * rate)
    samples = (int(12_000 * math.sin(2 * math.pi * frequency * i / rate)) for i in range(frames))
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as writer:
        writer.setnchannels(1)
        writer.setsampwidth(2)
        writer.setframerate(rate)
        writer.writeframes(b"".join(struct.pack("<h", s) for s in samples))
    return buffer.getvalue()


@dataclass
class TtsRequest:
    path: str
    body: dict[str, Any]
    headers: dict[str, str]


@dataclass
class FakeTts:
    port: int = field(default_factory=free_port)
    requests: list[TtsRequest] = field(default_factory=list)
    status: int = 200
    empty: bool = False
    _server: uvicorn.Server | None = None
    _task: asyncio.Task[None] | None = None

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base (…/v1)."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def sovits_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def fail_with(self, status: int = 500) -> None:
        self.status = status

    def answer_empty(self) -> None:
        self.empty = True

    def reset(self) -> None:
        self.status, self.empty = 200, False

    def _audio(self, text: str) -> Response:
        if self.status != 200:
            return JSONResponse({"error": {"message": "fake failure"}}, status_code=self.status)
        audio = sine_wav(0.0) if self.empty else sine_wav(max(0.2, 0.1 * len(text)))
        return Response(audio, media_type="audio/wav")

    def _build_app(self) -> FastAPI:
        app = FastAPI()

        @app.post("/v1/audio/speech")
        async def speech(request: Request) -> Response:
            body = await request.json()
            self.requests.append(TtsRequest("/v1/audio/speech", body, dict(request.headers)))
            if not body.get("input") or not body.get("voice") or not body.get("model"):
                return JSONResponse({"error": {"message": "missing field"}}, status_code=400)
            return self._audio(str(body["input"]))

        @app.post("/tts")
        async def sovits(request: Request) -> Response:
            body = await request.json()
            self.requests.append(TtsRequest("/tts", body, dict(request.headers)))
            for name in ("text", "text_lang", "ref_audio_path", "prompt_lang"):
                if not body.get(name):
                    return JSONResponse({"message": f"{name} is required"}, status_code=400)
            return self._audio(str(body["text"]))

        return app

    async def start(self) -> None:
        config = uvicorn.Config(self._build_app(), host="127.0.0.1", port=self.port,
                                log_level="warning", lifespan="off")  # fmt: skip
        self._server = uvicorn.Server(config)
        self._task = asyncio.create_task(self._server.serve())
        for _ in range(200):
            if self._server.started:
                return
            await asyncio.sleep(0.02)
        raise TimeoutError("fake TTS server did not start")

    async def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._task is not None:
            with contextlib.suppress(Exception):
                await self._task
