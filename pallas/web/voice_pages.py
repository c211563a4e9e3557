"""The 语音 page (`/console/voice`): the TTS chain with each provider's breaker, today's
switches of the defaults, and 试听 — a sample synthesised as a reply would be, played in the
browser (served from this page's own URL: the console's CSP allows no `data:` audio).

A provider's key is never shown, nor the variable holding it: only whether one is set.
"""

from __future__ import annotations

import logging
import secrets
import time
from dataclasses import dataclass

from cachetools import FIFOCache
from fastapi import APIRouter, Form, Request
from fastapi.responses import Response

from pallas.features.voice import VoiceConfig, VoiceService
from pallas.providers.breaker import state_label
from pallas.providers.tts import TTS_TASK, SpeechEndpointConfig, wav_duration
from pallas.web.app import SECURITY_HEADERS, Console, Session

log = logging.getLogger("pallas.console")

SAMPLES_KEPT = 8  # the newest samples, in memory
SAMPLE_TTL_S = 600.0
MAX_SAMPLE_CHARS = 200
MEDIA_TYPES = {"mp3": "audio/mpeg", "wav": "audio/wav", "ogg": "audio/ogg"}
KIND_ZH = {
    "openai": "OpenAI 兼容 /audio/speech",
    "gpt_sovits": "GPT-SoVITS",
    "edge_tts": "edge-tts",
}


@dataclass(frozen=True, slots=True)
class ProviderRow:
    name: str
    kind: str
    model: str
    voice: str
    key: str  # "已设置" / "未设置" / "不需要"
    breaker: str


@dataclass(frozen=True, slots=True)
class Sample:
    at: float
    audio: bytes
    format: str


def _key_label(provider: SpeechEndpointConfig, voice: VoiceService | None) -> str:
    if not provider.api_key_env:
        return "不需要"
    return "已设置" if voice is not None and voice.speech.has_key(provider) else "未设置"


def voice_routes(router: APIRouter, console: Console) -> None:
    samples: FIFOCache[str, Sample] = FIFOCache(SAMPLES_KEPT)  # the oldest sample goes first

    async def page(
        session: Session,
        *,
        text: str = "",
        group: int = 0,
        sample_id: str = "",
        result: str = "",
        error: str = "",
    ) -> Response:
        backend = session.backend
        config: VoiceConfig = backend.group_config(group).voice
        rows = []
        now = backend.now()
        for provider in config.providers:
            breaker = "-"
            if backend.voice is not None:
                state = await backend.voice.speech.breakers.get(TTS_TASK, provider.name)
                breaker = state_label(state, now)
            key = _key_label(provider, backend.voice)
            rows.append(ProviderRow(provider.name, KIND_ZH[provider.kind], provider.model,
                                    provider.voice, key, breaker))  # fmt: skip
        response = console.render(
            "voice.html", session, page="voice", config=config, providers=rows, text=text,
            group=group, sample_id=sample_id, result=result, error=error,
        )  # fmt: skip
        if error:
            response.status_code = 422
        return response

    @router.get("/voice")
    async def voice_page(request: Request, group: int = 0) -> Response:
        return await page(await console.session(request), group=group)

    @router.post("/voice/try")
    async def try_voice(
        request: Request, text: str = Form(""), group: int = Form(0), provider: str = Form("")
    ) -> Response:
        session = await console.checked(request)
        voice = session.backend.voice
        if voice is None:
            return await page(session, text=text, group=group, error="语音服务没有启动")
        text = text.strip()[:MAX_SAMPLE_CHARS]
        if not text:
            return await page(session, group=group, error="先写一句要说的话")
        config = session.backend.group_config(group).voice
        result = await voice.sample(text, config, group_id=group, provider=provider)
        attempts = "、".join(result.attempts) or "-"
        if not result.ok:
            log.info("console: voice sample failed (%s)", result.error)
            return await page(session, text=text, group=group,
                              error=f"合成失败：{result.error}（{attempts}）")  # fmt: skip
        sample_id = secrets.token_urlsafe(12)
        samples[sample_id] = Sample(time.monotonic(), result.audio, result.format)
        seconds = f"，{wav_duration(result.audio):.1f} 秒" if result.format == "wav" else ""
        size = f"{len(result.audio)} 字节 {result.format}{seconds}"
        summary = f"{result.provider} 合成了 {size}（{attempts}）"
        log.info("console: voice sample by %s (%d bytes)", result.provider, len(result.audio))
        return await page(session, text=text, group=group, sample_id=sample_id, result=summary)

    @router.get("/voice/sample/{sample_id}")
    async def sample_audio(request: Request, sample_id: str) -> Response:
        await console.session(request)
        sample = samples.get(sample_id)
        if sample is None or time.monotonic() - sample.at > SAMPLE_TTL_S:
            return Response("sample expired", status_code=404, media_type="text/plain")
        media = MEDIA_TYPES.get(sample.format, "application/octet-stream")
        return Response(sample.audio, media_type=media, headers=SECURITY_HEADERS)


__all__ = ["voice_routes"]
