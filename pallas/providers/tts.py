"""Text to speech: the TTS services operators already run, behind one small interface.

Three families, each a `SpeechProvider` (`synthesize(text) -> audio bytes`, raising
`SpeechError` with a stable reason):

- `openai`: any OpenAI-compatible `POST {base_url}/audio/speech` (OpenAI, SiliconFlow, the
  compatible gateways) with a model, a voice and a response format;
- `gpt_sovits`: the GPT-SoVITS HTTP API (`api_v2.py`: `POST {base_url}/tts` with the text, its
  language, the reference audio, its text and language);
- `edge_tts`: Microsoft Edge's read-aloud voices through the `edge-tts` package (free, no key).

`SpeechClient` runs a chain of them like `LLMClient` runs a task's endpoints: the first whose
circuit breaker is closed is asked, a failure moves on to the next one, every attempt moves its
breaker (task `tts`) and is one usage-ledger row (task `tts`, the characters synthesised in
`prompt_tokens`, the provider's name as the endpoint). Errors never escape: a `SpeechResult`
says what happened.

Keys come from the environment or the console's secrets file (`speech_key`), never from a
config file.
"""

from __future__ import annotations

import logging
import os
import time
import wave
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from io import BytesIO
from typing import Any, Literal, Protocol, cast

import httpx
from pydantic import BaseModel, ConfigDict, Field, model_validator

from pallas.core.clock import Clock
from pallas.core.db.repositories.usage import UsageEntry, UsageRepository
from pallas.core.errors import ProviderError
from pallas.core.secrets_file import backup_keys, read_all
from pallas.core.settings import PallasSettings
from pallas.providers.breaker import Breakers, check
from pallas.providers.endpoints import refuse_literal_key

log = logging.getLogger("pallas.voice")

TTS_TASK = "tts"
SpeechKind = Literal["openai", "gpt_sovits", "edge_tts"]
AudioFormat = Literal["mp3", "wav", "ogg", "silk", "unknown"]


class SpeechError(ProviderError):
    """A provider gave no usable audio; `reason` is stable (logs, route log, tests)."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason


class SpeechEndpointConfig(BaseModel):
    """One TTS service of the chain (`[[voice.providers]]`, default.toml only)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(
        pattern=r"^[A-Za-z0-9_.-]{1,32}$", description="名字（日志、熔断、用量里显示）"
    )
    kind: SpeechKind = Field(
        description="openai：/audio/speech；gpt_sovits：GPT-SoVITS；edge_tts：微软 Edge 朗读"
    )
    base_url: str = Field(
        default="", description="服务地址（openai 含 /v1；gpt_sovits 如 http://127.0.0.1:9880）"
    )
    api_key_env: str = Field(
        default="", description="密钥所在的环境变量名（不是密钥本身）；空 = 不需要密钥"
    )
    model: str = Field(
        default="", description="openai：模型名（如 tts-1、FunAudioLLM/CosyVoice2-0.5B）"
    )
    voice: str = Field(
        default="", description="音色：openai 的 voice、edge_tts 的 zh-CN-XiaoxiaoNeural 等"
    )
    response_format: Literal["mp3", "wav", "ogg"] = Field(
        default="mp3", description="要求服务返回的音频格式"
    )
    speed: float = Field(default=1.0, ge=0.25, le=4.0, description="语速（openai、gpt_sovits）")
    # GPT-SoVITS: the reference voice the service clones
    ref_audio_path: str = Field(default="", description="GPT-SoVITS：参考音频在服务端的路径")
    prompt_text: str = Field(default="", description="GPT-SoVITS：参考音频里说的话")
    prompt_lang: str = Field(default="zh", description="GPT-SoVITS：参考音频的语言")
    text_lang: str = Field(default="zh", description="GPT-SoVITS：要合成的文字的语言")
    # edge-tts
    rate: str = Field(
        default="+0%", pattern=r"^[+-]\d{1,3}%$", description="edge_tts：语速，如 +10%"
    )
    pitch: str = Field(
        default="+0Hz", pattern=r"^[+-]\d{1,3}Hz$", description="edge_tts：音调，如 -5Hz"
    )
    timeout_s: float = Field(default=20.0, gt=0, le=120, description="一次合成的超时（秒）")
    # numbers / dates / English spelled the Chinese way before synthesis (GPT-SoVITS needs it)
    chinese_numbers: bool | None = Field(
        default=None, description="先把数字、日期读成中文；空 = gpt_sovits 开、其余关"
    )

    @model_validator(mode="before")
    @classmethod
    def _no_literal_key(cls, data: Any) -> Any:
        return refuse_literal_key(data)

    @model_validator(mode="after")
    def _needs(self) -> SpeechEndpointConfig:
        if self.kind in ("openai", "gpt_sovits") and not self.base_url.startswith(
            ("http://", "https://")
        ):
            raise ValueError(f"voice provider {self.name}: base_url (http/https) is required")
        if self.kind == "gpt_sovits" and not self.ref_audio_path:
            raise ValueError(f"voice provider {self.name}: ref_audio_path is required")
        if self.kind == "openai" and not (self.model and self.voice):
            raise ValueError(f"voice provider {self.name}: model and voice are required")
        return self

    @property
    def wants_chinese_numbers(self) -> bool:
        return self.kind == "gpt_sovits" if self.chinese_numbers is None else self.chinese_numbers


def speech_key(
    settings: PallasSettings, variable: str, env: Mapping[str, str] | None = None
) -> str:
    """A TTS provider's key: the one place keys are looked up. The environment's non-empty
    value wins (as for the chat endpoints); then, for OPENAI_API_KEY, the chat primary's key;
    then the key the console saved for that variable in the deployment's secrets file
    (`pallas.core.secrets_file`: `key.<VARIABLE>`, or the model page's own key). "" = none."""
    if not variable:
        return ""
    source = os.environ if env is None else env
    if found := source.get(variable, "").strip():
        return found
    saved = read_all(settings.pallas_data_dir)
    if variable.upper() == "OPENAI_API_KEY":
        return settings.openai_api_key or saved.get("openai_api_key", "")
    return backup_keys(settings.pallas_data_dir).get(variable, "")


def sniff_format(audio: bytes) -> AudioFormat:
    """What the bytes are, by their magic numbers."""
    if audio[:4] == b"RIFF" and audio[8:12] == b"WAVE":
        return "wav"
    if audio[:3] == b"ID3" or (len(audio) > 1 and audio[0] == 0xFF and audio[1] & 0xE0 == 0xE0):
        return "mp3"
    if audio[:4] == b"OggS":
        return "ogg"
    if audio[:10] == b"#!SILK_V3" or audio[1:10] == b"#!SILK_V3":
        return "silk"
    return "unknown"


def wav_duration(audio: bytes) -> float:
    """Seconds of a WAV file (0.0 when it is none or unreadable)."""
    try:
        with wave.open(BytesIO(audio)) as reader:
            rate = reader.getframerate()
            return reader.getnframes() / rate if rate else 0.0
    except (wave.Error, EOFError):
        return 0.0


def check_audio(audio: bytes) -> AudioFormat:
    """The audio's format, or `SpeechError("bad_audio")`: an error page, an empty body or a
    WAV without samples is no voice."""
    fmt = sniff_format(audio)
    if fmt == "unknown":
        raise SpeechError("bad_audio", f"{len(audio)} bytes of no known audio format")
    if fmt == "wav" and wav_duration(audio) <= 0:
        raise SpeechError("bad_audio", "a WAV without samples")
    return fmt


class SpeechProvider(Protocol):
    config: SpeechEndpointConfig

    async def synthesize(self, text: str) -> bytes:
        """Audio for `text`, or `SpeechError`."""
        ...


def _http_error(exc: Exception) -> SpeechError:
    if isinstance(exc, httpx.TimeoutException):
        return SpeechError("timeout")
    if isinstance(exc, httpx.HTTPStatusError):
        status = exc.response.status_code
        return SpeechError("server_error" if status >= 500 else "client_error", str(status))
    if isinstance(exc, httpx.TransportError):
        return SpeechError("connection_error", type(exc).__name__)
    return SpeechError("error", type(exc).__name__)


class OpenAISpeech:
    """`POST {base_url}/audio/speech` {model, input, voice, response_format, speed}."""

    def __init__(self, config: SpeechEndpointConfig, api_key: str, http: httpx.AsyncClient) -> None:
        self.config = config
        self._key = api_key
        self._http = http

    async def synthesize(self, text: str) -> bytes:
        c = self.config
        headers = {"Authorization": f"Bearer {self._key}"} if self._key else {}
        body = {"model": c.model, "input": text, "voice": c.voice,
                "response_format": c.response_format, "speed": c.speed}  # fmt: skip
        try:
            response = await self._http.post(
                c.base_url.rstrip("/") + "/audio/speech", json=body, headers=headers,
                timeout=c.timeout_s,
            )  # fmt: skip
            response.raise_for_status()
        except Exception as exc:
            raise _http_error(exc) from exc
        return response.content


class GptSovitsSpeech:
    """The GPT-SoVITS API (`api_v2.py`): `POST {base_url}/tts` with JSON; the answer is the
    audio itself, an error is JSON with a 400."""

    def __init__(self, config: SpeechEndpointConfig, api_key: str, http: httpx.AsyncClient) -> None:
        self.config = config
        self._key = api_key
        self._http = http

    async def synthesize(self, text: str) -> bytes:
        c = self.config
        body = {
            "text": text,
            "text_lang": c.text_lang,
            "ref_audio_path": c.ref_audio_path,
            "prompt_text": c.prompt_text,
            "prompt_lang": c.prompt_lang,
            "media_type": c.response_format,
            "speed_factor": c.speed,
            "streaming_mode": False,
        }
        headers = {"Authorization": f"Bearer {self._key}"} if self._key else {}
        try:
            response = await self._http.post(
                c.base_url.rstrip("/") + "/tts", json=body, headers=headers, timeout=c.timeout_s
            )
            response.raise_for_status()
        except Exception as exc:
            raise _http_error(exc) from exc
        return response.content


# edge-tts's `Communicate(text, voice, rate=…, pitch=…)`, whose `stream()` yields
# {"type": "audio", "data": bytes} chunks (and word boundaries): injectable for tests
class _Communicate(Protocol):
    def stream(self) -> AsyncIterator[Mapping[str, Any]]: ...


CommunicateFactory = Callable[..., _Communicate]


def _edge_communicate(*args: Any, **kwargs: Any) -> _Communicate:
    import edge_tts  # imported on first use: aiohttp is not needed before

    communicate: Any = edge_tts.Communicate(*args, **kwargs)  # TTSChunk: a TypedDict
    return cast(_Communicate, communicate)


class EdgeSpeech:
    """Edge's read-aloud voices through `edge-tts` (MP3, 24 kHz mono)."""

    def __init__(
        self, config: SpeechEndpointConfig, communicate: CommunicateFactory | None = None
    ) -> None:
        self.config = config
        self._communicate = communicate or _edge_communicate

    async def synthesize(self, text: str) -> bytes:
        c = self.config
        chunks: list[bytes] = []
        try:
            communicate = self._communicate(
                text, c.voice or "zh-CN-XiaoxiaoNeural", rate=c.rate, pitch=c.pitch,
                connect_timeout=int(c.timeout_s), receive_timeout=int(c.timeout_s),
            )  # fmt: skip
            async for chunk in communicate.stream():
                if chunk.get("type") == "audio" and chunk.get("data"):
                    chunks.append(bytes(chunk["data"]))
        except SpeechError:
            raise
        except TimeoutError as exc:
            raise SpeechError("timeout") from exc
        except Exception as exc:  # edge-tts's own errors (NoAudioReceived, WebSocketError, …)
            raise SpeechError("error", type(exc).__name__) from exc
        return b"".join(chunks)


def build_provider(
    config: SpeechEndpointConfig,
    settings: PallasSettings,
    http: httpx.AsyncClient,
    *,
    env: Mapping[str, str] | None = None,
    communicate: CommunicateFactory | None = None,
) -> SpeechProvider:
    key = speech_key(settings, config.api_key_env, env)
    if config.kind == "openai":
        return OpenAISpeech(config, key, http)
    if config.kind == "gpt_sovits":
        return GptSovitsSpeech(config, key, http)
    return EdgeSpeech(config, communicate)


@dataclass(frozen=True, slots=True)
class SpeechResult:
    ok: bool
    audio: bytes = b""
    format: AudioFormat = "unknown"
    error: str = ""  # the last failure's reason ("" when ok); "no_provider" for an empty chain
    provider: str = ""  # who answered (or failed last)
    latency_ms: float = 0.0
    attempts: tuple[str, ...] = field(default_factory=tuple)  # "main:timeout", "edge:ok"


class SpeechClient:
    """Every synthesis of the bot, over the configured chain, with breakers and the ledger."""

    def __init__(
        self,
        settings: PallasSettings,
        usage: UsageRepository | None,
        clock: Clock,
        breakers: Breakers,
        *,
        http: httpx.AsyncClient | None = None,
        env: Mapping[str, str] | None = None,
        communicate: CommunicateFactory | None = None,
    ) -> None:
        self._settings = settings
        self._usage = usage
        self._clock = clock
        self.breakers = breakers
        self._http = http
        self._own_http = http is None
        self._env = env
        self._communicate = communicate
        self._providers: dict[SpeechEndpointConfig, SpeechProvider] = {}

    def has_key(self, config: SpeechEndpointConfig) -> bool:
        """Whether the provider's key variable is set (the console shows only that)."""
        return bool(speech_key(self._settings, config.api_key_env, self._env))

    def _http_client(self) -> httpx.AsyncClient:
        if self._http is None:
            self._http = httpx.AsyncClient(follow_redirects=False)
        return self._http

    def provider(self, config: SpeechEndpointConfig) -> SpeechProvider:
        provider = self._providers.get(config)
        if provider is None:
            provider = build_provider(config, self._settings, self._http_client(), env=self._env,
                                      communicate=self._communicate)  # fmt: skip
            self._providers[config] = provider
        return provider

    async def _usable(self, chain: Sequence[SpeechEndpointConfig]) -> list[SpeechEndpointConfig]:
        now = self._clock.now()
        usable = [c for c in chain
                  if check(await self.breakers.get(TTS_TASK, c.name), now).allowed]  # fmt: skip
        return usable or list(chain[:1])

    async def synthesize(
        self,
        text: str,
        chain: Sequence[SpeechEndpointConfig],
        *,
        bot_id: int,
        group_id: int,
        prepare: Callable[[str, SpeechEndpointConfig], str] | None = None,
    ) -> SpeechResult:
        """Audio for `text` from the first provider of `chain` that gives some; `prepare`
        adapts the text to a provider (Chinese numbers for GPT-SoVITS)."""
        if not chain:
            return SpeechResult(False, error="no_provider")
        started = time.perf_counter()
        attempts: list[str] = []
        result = SpeechResult(False, error="error")
        for config in await self._usable(chain):
            spoken = prepare(text, config) if prepare is not None else text
            try:
                audio = await self.provider(config).synthesize(spoken)
                fmt = check_audio(audio)
            except SpeechError as exc:
                result = SpeechResult(False, error=exc.reason, provider=config.name)
                log.warning("tts call to %s (%s) failed for group %s: %s", config.name,
                            config.kind, group_id, exc)  # fmt: skip
            except Exception as exc:  # a provider bug must not cost the reply
                result = SpeechResult(False, error="error", provider=config.name)
                log.exception("tts call to %s failed for group %s: %r", config.name, group_id, exc)
            else:
                result = SpeechResult(True, audio=audio, format=fmt, provider=config.name)
            attempts.append(f"{config.name}:{'ok' if result.ok else result.error}")
            fault = not result.ok and result.error != "client_error"
            await self.breakers.record(TTS_TASK, config.name, not fault, self._clock.now(),
                                       result.error)  # fmt: skip
            self._record(config, len(spoken), result.ok, bot_id=bot_id, group_id=group_id)
            if result.ok:
                break
        latency = (time.perf_counter() - started) * 1000
        return replace(result, latency_ms=latency, attempts=tuple(attempts))

    def _record(
        self, config: SpeechEndpointConfig, chars: int, ok: bool, *, bot_id: int, group_id: int
    ) -> None:
        if self._usage is None:
            return
        model = config.model or config.voice or config.kind
        try:
            self._usage.record_later(
                UsageEntry(
                    now=self._clock.now(),
                    bot_id=bot_id,
                    group_id=group_id,
                    task=TTS_TASK,
                    model=f"{config.kind}:{model}",
                    prompt_tokens=chars if ok else 0,
                    completion_tokens=0,
                    failed=not ok,
                    endpoint=config.name,
                )
            )
        except Exception:
            log.exception("recording tts usage failed (group %s)", group_id)

    async def close(self) -> None:
        if self._own_http and self._http is not None:
            await self._http.aclose()
            self._http = None


__all__ = [
    "TTS_TASK",
    "EdgeSpeech",
    "GptSovitsSpeech",
    "OpenAISpeech",
    "SpeechClient",
    "SpeechEndpointConfig",
    "SpeechError",
    "SpeechProvider",
    "SpeechResult",
    "build_provider",
    "check_audio",
    "sniff_format",
    "speech_key",
    "wav_duration",
]
