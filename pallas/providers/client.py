"""The one way Pallas talks to an LLM: `AsyncOpenAI` against any compatible endpoint.

Every call names its task (chat / cheap / vision / embedding) so the model, the usage ledger
and per-group daily budgets line up. Errors never escape as exceptions or as text for the
group: a `CompletionResult` says what happened (`ok`, an `LLMError`, the HTTP status when
there was one), and the caller stays quiet.
Retries with backoff on 429 / 5xx / timeouts are the `openai` client's own (`max_retries`).

The `openai` package (~0.6-1 s and ~14 MB to import) is imported when the client is first
needed, not with this module: start-up reaches "listening" without it, and the start-up
warm-up thread (`pallas.onebot.startup_loads`) imports it right after via `load_sdk()`.
"""

from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Literal

from pallas.core.clock import Clock
from pallas.core.db.repositories.usage import UsageEntry, UsageRepository
from pallas.core.settings import PallasSettings

if TYPE_CHECKING:
    import httpx2
    from openai import AsyncOpenAI

log = logging.getLogger("pallas.llm")

Task = Literal["chat", "cheap", "vision", "embedding"]
_CHAT_OPTIONS: Any = {"security": {"bearer_auth": True}}  # what `create` sends with
_THINK = re.compile(r"<think>.*?(?:</think>|$)", re.DOTALL | re.IGNORECASE)


class LLMError(StrEnum):
    """Why a call gave no usable answer. The values are what snapshots and logs show
    (`error:server_error`), so they stay stable."""

    DISABLED = "disabled"  # replies are off (no key / PALLAS_REPLIES_ENABLED=false)
    TIMEOUT = "timeout"
    RATE_LIMITED = "rate_limited"  # 429 after the SDK's own retries
    CONNECTION_ERROR = "connection_error"
    SERVER_ERROR = "server_error"  # 5xx after retries
    CLIENT_ERROR = "client_error"  # other 4xx: bad key, unknown model, request too large
    BAD_RESPONSE = "bad_response"  # not a chat completion
    EMPTY = "empty"  # no text left (or only a <think> block)
    UNKNOWN = "error"


@dataclass(frozen=True, slots=True)
class CompletionResult:
    ok: bool
    text: str = ""
    error: LLMError | None = None
    model: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_ms: float = 0.0
    http_status: int | None = None  # the provider's status code when it answered with one


class LLMClient:
    def __init__(
        self,
        settings: PallasSettings,
        usage: UsageRepository | None,
        clock: Clock,
        *,
        http_client: httpx2.AsyncClient | None = None,
    ) -> None:
        """`http_client` is handed to the SDK as is (tests pass one on an
        `httpx2.MockTransport`); by default the SDK builds its own pool."""
        self._settings = settings
        self._usage = usage
        self._clock = clock
        self._http_client = http_client
        self._enabled = settings.replies_enabled
        self._sdk_client: AsyncOpenAI | None = None

    @property
    def enabled(self) -> bool:
        return self._enabled

    @property
    def _client(self) -> AsyncOpenAI | None:
        """The SDK client, built on first use (None when replies are disabled)."""
        if self._sdk_client is None and self._enabled:
            from openai import AsyncOpenAI

            s = self._settings
            self._sdk_client = AsyncOpenAI(
                api_key=s.openai_api_key,
                base_url=s.openai_base_url,
                timeout=s.pallas_llm_timeout_seconds,
                max_retries=s.pallas_llm_max_retries,
                http_client=self._http_client,
            )
        return self._sdk_client

    def warm_client(self) -> None:
        """Build the SDK client now (an SSL context and an httpx pool, ~50 ms): a start-up load
        run in a worker thread, so the first @ does not build it on the loop. A no-op when
        replies are disabled or the client exists."""
        _ = self._client

    def model_for(self, task: Task) -> str:
        s = self._settings
        return {
            "chat": s.pallas_chat_model,
            "cheap": s.pallas_cheap_model,
            "vision": s.pallas_vision_model,
            "embedding": s.pallas_embedding_model,
        }[task]

    async def complete(
        self,
        task: Task,
        messages: list[dict[str, Any]],
        *,
        bot_id: int,
        group_id: int,
        max_tokens: int | None = None,
        temperature: float | None = None,
        model: str | None = None,
    ) -> CompletionResult:
        model = model or self.model_for(task)
        if self._client is None:
            return CompletionResult(ok=False, error=LLMError.DISABLED, model=model)
        started = time.perf_counter()
        kwargs: dict[str, Any] = {"model": model, "messages": messages}
        if max_tokens is not None:
            kwargs["max_tokens"] = max_tokens
        if temperature is not None:
            kwargs["temperature"] = temperature
        try:
            response = await post_chat(self._client, kwargs)
        except Exception as exc:  # every failure becomes a quiet, logged result
            result = _failure(exc, model)
            log.warning(
                "llm %s call failed for group %s (%s, status %s): %s",
                task,
                group_id,
                result.error,
                result.http_status,
                exc,
            )
        else:
            result = _parse(response, model)
            if not result.ok:
                log.warning("llm %s answer unusable for group %s: %s", task, group_id, result.error)
        result = _with_latency(result, started)
        await self._record(task, result, bot_id=bot_id, group_id=group_id)
        return result

    async def embed(self, texts: list[str], *, bot_id: int, group_id: int) -> list[list[float]]:
        """Embeddings for retrieval; empty list when disabled or on failure."""
        model = self.model_for("embedding")
        if self._client is None or not model or not texts:
            return []
        try:
            response = await self._client.embeddings.create(model=model, input=texts)
        except Exception as exc:
            log.warning("embedding call failed for group %s: %s", group_id, exc)
            await self._record("embedding", CompletionResult(False, model=model), bot_id, group_id)
            return []
        usage = getattr(response, "usage", None)
        tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
        ok = CompletionResult(True, model=model, prompt_tokens=tokens)
        await self._record("embedding", ok, bot_id=bot_id, group_id=group_id)
        return [list(item.embedding) for item in sorted(response.data, key=lambda d: d.index)]

    async def transcribe(
        self, audio: bytes, filename: str, *, bot_id: int, group_id: int
    ) -> str | None:
        """Speech to text (`/v1/audio/transcriptions`); None when off or on failure."""
        model = self._settings.pallas_transcribe_model
        if self._client is None or not model or not audio:
            return None
        started = time.perf_counter()
        try:
            response = await self._client.audio.transcriptions.create(
                model=model, file=(filename, audio)
            )
        except Exception as exc:
            log.warning("transcription failed for group %s: %s", group_id, exc)
            await self._record("transcribe", CompletionResult(False, model=model), bot_id, group_id)
            return None
        ok = _with_latency(CompletionResult(True, model=model), started)
        await self._record("transcribe", ok, bot_id=bot_id, group_id=group_id)
        return str(getattr(response, "text", "") or "").strip() or None

    async def _record(
        self, task: str, result: CompletionResult, bot_id: int, group_id: int
    ) -> None:
        if self._usage is None:
            return
        try:  # write-behind: the ledger row is batched off the caller's path
            self._usage.record_later(
                UsageEntry(
                    now=self._clock.now(),
                    bot_id=bot_id,
                    group_id=group_id,
                    task=task,
                    model=result.model,
                    prompt_tokens=result.prompt_tokens,
                    completion_tokens=result.completion_tokens,
                    failed=not result.ok,
                )
            )
        except Exception:
            log.exception("recording llm usage failed (group %s, task %s)", group_id, task)

    async def close(self) -> None:
        if self._sdk_client is not None:
            await self._sdk_client.close()


async def post_chat(client: AsyncOpenAI, body: dict[str, Any]) -> Any:
    """`chat.completions.create` without its typed-dict transform of the body.

    `create` walks every message against the SDK's TypedDicts before sending (~3–7 ms of
    event-loop CPU for a reply's ~30 messages); our body is already plain JSON (strings,
    lists, dicts; no aliased keys, dates or files), so it goes through the client's
    documented `post` for custom requests: same path, auth, retries, timeout and errors.
    """
    from openai.types.chat import ChatCompletion

    return await client.post(
        "/chat/completions", cast_to=ChatCompletion, body=body, options=_CHAT_OPTIONS
    )


def load_sdk() -> None:
    """Import the `openai` package now (a start-up warm-up; idempotent, thread-safe)."""
    import openai  # noqa: F401


def _failure(exc: Exception, model: str) -> CompletionResult:
    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) else None
    return CompletionResult(False, error=classify(exc), model=model, http_status=status)


def classify(exc: BaseException) -> LLMError:
    """The `LLMError` for an exception raised by the SDK (or while reading its answer)."""
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return LLMError.TIMEOUT
    if isinstance(exc, openai.RateLimitError):
        return LLMError.RATE_LIMITED
    if isinstance(exc, openai.APIConnectionError):
        return LLMError.CONNECTION_ERROR
    if isinstance(exc, openai.APIStatusError):
        return LLMError.SERVER_ERROR if exc.status_code >= 500 else LLMError.CLIENT_ERROR
    if isinstance(exc, openai.APIResponseValidationError | ValueError | TypeError):
        return LLMError.BAD_RESPONSE
    return LLMError.UNKNOWN


def _parse(response: Any, model: str) -> CompletionResult:
    usage = getattr(response, "usage", None)
    prompt = int(getattr(usage, "prompt_tokens", 0) or 0)
    completion = int(getattr(usage, "completion_tokens", 0) or 0)
    choices = getattr(response, "choices", None)
    if not isinstance(choices, list) or not choices:
        return CompletionResult(
            False, error=LLMError.BAD_RESPONSE, model=model, prompt_tokens=prompt
        )
    message = getattr(choices[0], "message", None)
    content = getattr(message, "content", None)
    if not isinstance(content, str):
        return CompletionResult(False, error=LLMError.EMPTY, model=model, prompt_tokens=prompt)
    if not _THINK.sub("", content).strip():
        return CompletionResult(False, error=LLMError.EMPTY, model=model, prompt_tokens=prompt)
    return CompletionResult(True, content, None, model, prompt, completion)


def _with_latency(result: CompletionResult, started: float) -> CompletionResult:
    return replace(result, latency_ms=(time.perf_counter() - started) * 1000)
