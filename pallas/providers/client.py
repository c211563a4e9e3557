"""The one way Pallas talks to an LLM: `AsyncOpenAI` against any compatible endpoint.

Every call names its task (chat / cheap / vision / embedding) so the model, the usage ledger
and per-group daily budgets line up. Each task has a chain of endpoints (the primary, then the
backups of `config/providers.toml`) guarded by circuit breakers (`breaker.py`); the body each
model gets follows its `ModelProfile` (`wire.py`). Errors never escape as exceptions or as
text for the group: a `CompletionResult` says what happened (`ok`, an `LLMError`, the HTTP
status when there was one, which endpoint answered), and the caller stays quiet.

The `openai` package (~0.6-1 s and ~14 MB to import) is imported when the client is first
needed, not with this module: start-up reaches "listening" without it, and the start-up
warm-up thread (`pallas.onebot.startup_loads`) imports it right after via `load_sdk()`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from pallas.core.clock import Clock
from pallas.core.db.repositories.usage import UsageEntry, UsageRepository
from pallas.core.settings import PallasSettings
from pallas.core.state import MemoryStateStore, StateStore
from pallas.providers.breaker import Breakers, BreakerState, check, state_label
from pallas.providers.embedding_auto import EmbeddingSwitch
from pallas.providers.endpoints import (
    TASKS,
    Endpoint,
    ProvidersConfig,
    Task,
    resolve_chain,
    task_model,
)
from pallas.providers.live import LiveEndpoints
from pallas.providers.models import ModelProfile, profile_for
from pallas.providers.wire import (
    ModelToolCall,
    answer_text,
    read_tool_calls,
    read_usage,
    request_body,
    retry_after_seconds,
)

if TYPE_CHECKING:
    import httpx2
    from openai import AsyncOpenAI

__all__ = [
    "CompletionResult",
    "EndpointStatus",
    "LLMClient",
    "LLMError",
    "Task",
    "classify",
    "load_sdk",
]

log = logging.getLogger("pallas.llm")

_CHAT_OPTIONS: Any = {"security": {"bearer_auth": True}}  # what `create` sends with
MIN_ATTEMPT_S = 0.5  # an attempt with less time than this left is not started


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
    cached_tokens: int = 0  # prompt tokens the provider served from its prefix cache
    reasoning_tokens: int = 0  # completion tokens spent thinking
    endpoint: str = ""  # the endpoint that gave this result ("primary", a backup's name)
    attempts: tuple[str, ...] = ()  # "primary:server_error", "backup:ok", … in call order
    # functions the model asked for (only when the call offered `tools`); `ok` with no text
    tool_calls: tuple[ModelToolCall, ...] = ()


@dataclass(frozen=True, slots=True)
class EndpointStatus:
    task: str
    name: str
    model: str
    label: str  # the breaker's state in Chinese ("正常", "熔断中（…）")
    state: BreakerState

    @property
    def healthy(self) -> bool:
        return self.state.open_until <= 0


RETRYABLE = frozenset({LLMError.TIMEOUT, LLMError.RATE_LIMITED, LLMError.CONNECTION_ERROR,
                       LLMError.SERVER_ERROR})  # fmt: skip
_REQUEST_FAULT_STATUSES = frozenset({400, 413, 422})  # the request's fault, not the endpoint's


def endpoint_fault(result: CompletionResult) -> bool:
    """Whether a failure counts against the endpoint's breaker (an empty answer or a request
    the endpoint rightly refused does not)."""
    if result.ok or result.error in (LLMError.EMPTY, LLMError.DISABLED):
        return False
    return not (result.error is LLMError.CLIENT_ERROR
                and result.http_status in _REQUEST_FAULT_STATUSES)  # fmt: skip


def falls_over(result: CompletionResult) -> bool:
    """Whether the next endpoint should try: any failure but an empty answer (the model
    answered; another one would only cost twice). A refused request is tried once more too:
    the backup may take what this endpoint's quirks refused."""
    return not result.ok and result.error is not LLMError.EMPTY


class LLMClient:
    """Every LLM call of the bot, over each task's endpoint chain (`endpoints.resolve_chain`).

    A call goes to the first endpoint whose breaker is closed; on a failure that is the
    endpoint's (timeout, 5xx, 429, connection, bad key, garbage) the next one answers within
    the same call, all inside `deadline_s`. A 429's `Retry-After` is waited out on the same
    endpoint when short enough. The last endpoint of the chain keeps the old single-endpoint
    behaviour: `PALLAS_LLM_MAX_RETRIES` retries with backoff. Every attempt is a ledger row
    (with its endpoint) and moves that endpoint's breaker.
    """

    def __init__(
        self,
        settings: PallasSettings,
        usage: UsageRepository | None,
        clock: Clock,
        *,
        http_client: httpx2.AsyncClient | None = None,
        providers: ProvidersConfig | None = None,
        state: StateStore | None = None,
        env: Mapping[str, str] | None = None,
        group_profiles: Callable[[int], Mapping[str, ModelProfile]] | None = None,
        endpoints: LiveEndpoints | None = None,
    ) -> None:
        """`http_client` is handed to the SDK as is (tests pass one on an
        `httpx2.MockTransport`); by default the SDK builds its own pool. `state` holds the
        breakers (shared by every process on Redis; a private in-memory store when None).
        `group_profiles(group_id)`: a group's `[models]`, for calls that do not pass theirs
        (background tasks), so every call follows the operator's model profiles.
        `endpoints`: the holder of the endpoint set in force (`live.LiveEndpoints`, owned by the
        runtime: a key saved in the console reaches the next call); by default one over
        `settings` alone, which never changes."""
        self._live = endpoints or LiveEndpoints(settings, providers, env=env)
        self._usage = usage
        self._clock = clock
        self._http_client = http_client
        # the embedding chain over the chosen model, per endpoint set (its generation)
        self._embedding_chain: tuple[int, str, tuple[Endpoint, ...]] | None = None
        # breaker thresholds are read once: a providers.toml saved later changes the chains,
        # the deadline and Retry-After handling at once, the breaker thresholds at the next start
        self.breakers = Breakers(state or MemoryStateStore(clock), self.providers.breaker)
        self._sdk_clients: dict[tuple[str, str, str], AsyncOpenAI] = {}
        self._group_profiles = group_profiles

    @property
    def providers(self) -> ProvidersConfig:
        """`config/providers.toml` as in force now (the console may save a new one)."""
        return self._live.providers

    @property
    def _settings(self) -> PallasSettings:
        """The settings in force now (the environment's, or the console's saved model)."""
        return self._live.current().settings

    @property
    def embeddings(self) -> EmbeddingSwitch:
        """On / off / pending the probe (`embedding_auto`, `embedding_probe`): the switch of the
        endpoint set in force (a saved model with another address or key gets a new one)."""
        return self._live.current().embeddings

    @property
    def enabled(self) -> bool:
        return self._live.current().enabled

    @property
    def endpoints(self) -> LiveEndpoints:
        """The holder of the endpoint set in force (the console's model page reads and
        reloads it)."""
        return self._live

    def chain(self, task: Task) -> tuple[Endpoint, ...]:
        current = self._live.current()
        if task != "embedding":
            return current.chains[task]
        switch = current.embeddings
        model = switch.model or switch.plan.model  # the probe's choice, else the plan's
        cached = self._embedding_chain
        if cached is None or cached[:2] != (current.generation, model):
            chain = resolve_chain(current.settings, self.providers, "embedding",
                                  self._live.key_env(), model=model)  # fmt: skip
            cached = self._embedding_chain = (current.generation, model, chain)
        return cached[2]

    def client_for(self, endpoint: Endpoint) -> AsyncOpenAI:
        """The endpoint's SDK client, built on first use (one per name, URL and key: a new key
        saved in the console gets a new client); retries are this class's own."""
        identity = (endpoint.name, endpoint.base_url, endpoint.api_key)
        client = self._sdk_clients.get(identity)
        if client is None:
            from openai import AsyncOpenAI

            client = AsyncOpenAI(
                api_key=endpoint.api_key,
                base_url=endpoint.base_url,
                timeout=self._settings.pallas_llm_timeout_seconds,
                max_retries=0,
                http_client=self._http_client,
            )
            self._sdk_clients[identity] = client
        return client

    def warm_client(self) -> None:
        """Build the primary's SDK client now (an SSL context and an httpx pool, ~50 ms): a
        start-up load run in a worker thread, so the first @ does not build it on the loop.
        A no-op when replies are disabled or the client exists."""
        if self.enabled:
            self.client_for(self.chain("chat")[0])

    def model_for(self, task: Task) -> str:
        """The task's model ("" for embeddings while they are off or pending the probe)."""
        if task == "embedding":
            return self.embeddings.model
        return task_model(self._settings, task)

    async def endpoint_status(self) -> list[EndpointStatus]:
        """Every task's chain with its breakers (the console and `/pallas status`); tasks
        without a model (embeddings off) are left out."""
        now = self._clock.now()
        out = []
        for task in TASKS:
            for endpoint in self.chain(task):
                if not endpoint.model or (task == "embedding" and not self.embeddings.on):
                    continue
                state = await self.breakers.get(task, endpoint.name)
                out.append(EndpointStatus(task, endpoint.name, endpoint.model,
                                          state_label(state, now), state))  # fmt: skip
        return out

    async def _usable(self, task: Task, chain: Sequence[Endpoint]) -> list[Endpoint]:
        """The endpoints whose breaker lets a call through; the first one when all are open
        (someone must be tried: that call is the probe)."""
        now = self._clock.now()
        usable = [e for e in chain if check(await self.breakers.get(task, e.name), now).allowed]
        return usable or list(chain[:1])

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
        profiles: Mapping[str, ModelProfile] | None = None,
        json_schema: Mapping[str, Any] | None = None,
        tools: Sequence[Mapping[str, Any]] = (),
    ) -> CompletionResult:
        """`model` replaces the primary's model (the cost ladder's choice); `profiles` are the
        group's `[models]`, read for each endpoint's model (its wire quirks); `json_schema`
        ({"name", "schema"}) asks for a JSON answer of that shape where the model's profile
        allows `response_format` (`structured_output`); `tools` are offered to the model
        (OpenAI format): an answer asking for them has `tool_calls`."""
        chain = self.chain(task)
        if model:
            chain = (replace(chain[0], model=model), *chain[1:])
        if not self.enabled or not chain[0].model:  # no key, or a task with no model (off)
            return CompletionResult(ok=False, error=LLMError.DISABLED, model=chain[0].model)
        started = time.perf_counter()
        deadline = started + self.providers.deadline_s
        usable = await self._usable(task, chain)
        if profiles is None and self._group_profiles is not None:
            try:
                profiles = self._group_profiles(group_id)
            except Exception:  # a config problem must not cost the call: built-in profiles
                log.exception("model profiles of group %s unreadable", group_id)
        attempts: list[str] = []
        result = CompletionResult(ok=False, error=LLMError.UNKNOWN, model=chain[0].model)
        for index, endpoint in enumerate(usable):
            profile = profile_for(dict(profiles or {}), endpoint.model)
            body = request_body(
                messages, model=endpoint.model, profile=profile,
                max_tokens=max_tokens, temperature=temperature, json_schema=json_schema,
                tools=tools,
            )  # fmt: skip
            last = index == len(usable) - 1
            retries = self._settings.pallas_llm_max_retries if last else 0
            result = await self._attempt(endpoint, body, deadline, retries)
            attempts.append(f"{endpoint.name}:{'ok' if result.ok else result.error}")
            if not result.ok:
                log.warning(
                    "llm %s call to %s failed for group %s (%s, status %s)%s",
                    task, endpoint.label, group_id, result.error, result.http_status,
                    "" if last or not falls_over(result) else ", trying the next endpoint",
                )  # fmt: skip
            await self.breakers.record(
                task, endpoint.name, not endpoint_fault(result), self._clock.now(),
                str(result.error or ""),
            )  # fmt: skip
            await self._record(task, result, bot_id=bot_id, group_id=group_id)
            if result.ok or not falls_over(result):
                break
        return replace(_with_latency(result, started), attempts=tuple(attempts))

    async def _attempt(
        self, endpoint: Endpoint, body: dict[str, Any], deadline: float, retries: int
    ) -> CompletionResult:
        """One endpoint: its answer, or its failure after the retries the deadline allows."""
        client = self.client_for(endpoint)
        tries = 0
        while True:
            remaining = deadline - time.perf_counter()
            if remaining <= MIN_ATTEMPT_S:
                return CompletionResult(False, error=LLMError.TIMEOUT, model=endpoint.model,
                                        endpoint=endpoint.name)  # fmt: skip
            timeout = min(self._settings.pallas_llm_timeout_seconds, remaining)
            try:
                response = await post_chat(client, body, timeout_s=timeout)
            except Exception as exc:  # every failure becomes a quiet, logged result
                result = replace(_failure(exc, endpoint.model), endpoint=endpoint.name)
                wait = self._retry_wait(exc, result, tries, retries)
                if wait is None or time.perf_counter() + wait + MIN_ATTEMPT_S >= deadline:
                    return result
                tries += 1
                await asyncio.sleep(wait)
                continue
            return replace(_parse(response, endpoint.model), endpoint=endpoint.name)

    def _retry_wait(
        self, exc: Exception, result: CompletionResult, tries: int, retries: int
    ) -> float | None:
        """Seconds to wait before trying the same endpoint again, or None to stop."""
        if result.error is LLMError.RATE_LIMITED:
            after = retry_after_seconds(exc)
            if after is not None and after <= self.providers.retry_after_max_s:
                return after if tries < max(1, retries) else None
        if result.error in RETRYABLE and tries < retries:
            return float(min(8.0, 0.5 * 2**tries))
        return None

    async def embed(self, texts: list[str], *, bot_id: int, group_id: int) -> list[list[float]]:
        """Embeddings for retrieval; empty list when disabled or when every endpoint failed."""
        model = self.model_for("embedding")
        if not self.enabled or not model or not texts:
            return []
        for endpoint in await self._usable("embedding", self.chain("embedding")):
            try:
                response = await self.client_for(endpoint).embeddings.create(
                    model=model, input=texts
                )
            except Exception as exc:
                failed = replace(_failure(exc, model), endpoint=endpoint.name)
                log.warning("embedding call to %s failed for group %s: %s", endpoint.label,
                            group_id, exc)  # fmt: skip
                await self.breakers.record("embedding", endpoint.name, not endpoint_fault(failed),
                                           self._clock.now(), str(failed.error))  # fmt: skip
                await self._record("embedding", failed, bot_id, group_id)
                continue
            tokens = read_usage(getattr(response, "usage", None)).prompt
            ok = CompletionResult(True, model=model, prompt_tokens=tokens, endpoint=endpoint.name)
            await self.breakers.record("embedding", endpoint.name, True, self._clock.now(), "")
            await self._record("embedding", ok, bot_id=bot_id, group_id=group_id)
            return [list(item.embedding) for item in sorted(response.data, key=lambda d: d.index)]
        return []

    async def transcribe(
        self, audio: bytes, filename: str, *, bot_id: int, group_id: int
    ) -> str | None:
        """Speech to text (`/v1/audio/transcriptions`, the primary only); None when off or
        on failure."""
        model = self._settings.pallas_transcribe_model
        if not self.enabled or not model or not audio:
            return None
        started = time.perf_counter()
        primary = self.chain("chat")[0]
        try:
            response = await self.client_for(primary).audio.transcriptions.create(
                model=model, file=(filename, audio)
            )
        except Exception as exc:
            log.warning("transcription failed for group %s: %s", group_id, exc)
            failed = CompletionResult(False, model=model, endpoint=primary.name)
            await self._record("transcribe", failed, bot_id, group_id)
            return None
        ok = _with_latency(CompletionResult(True, model=model, endpoint=primary.name), started)
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
                    cached_tokens=result.cached_tokens,
                    reasoning_tokens=result.reasoning_tokens,
                    endpoint=result.endpoint,
                )
            )
        except Exception:
            log.exception("recording llm usage failed (group %s, task %s)", group_id, task)

    async def close(self) -> None:
        for client in self._sdk_clients.values():
            await client.close()
        self._sdk_clients.clear()


async def post_chat(
    client: AsyncOpenAI, body: dict[str, Any], *, timeout_s: float | None = None
) -> Any:
    """`chat.completions.create` without its typed-dict transform of the body.

    `create` walks every message against the SDK's TypedDicts before sending (~3–7 ms of
    event-loop CPU for a reply's ~30 messages); our body is already plain JSON (strings,
    lists, dicts; no aliased keys, dates or files), so it goes through the client's
    documented `post` for custom requests: same path, auth, retries, timeout and errors.
    """
    from openai.types.chat import ChatCompletion

    # the SDK's own per-request timeout (the remaining share of the call's deadline)
    options: Any = _CHAT_OPTIONS if timeout_s is None else {**_CHAT_OPTIONS, "timeout": timeout_s}
    return await client.post(
        "/chat/completions", cast_to=ChatCompletion, body=body, options=options
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
    tokens = read_usage(getattr(response, "usage", None))
    counted = CompletionResult(
        False,
        model=model,
        prompt_tokens=tokens.prompt,
        completion_tokens=tokens.completion,
        cached_tokens=tokens.cached,
        reasoning_tokens=tokens.reasoning,
    )
    choices = getattr(response, "choices", None)
    if not isinstance(choices, list) or not choices:
        return replace(counted, error=LLMError.BAD_RESPONSE)
    message = getattr(choices[0], "message", None)
    # only `content` is the answer: `reasoning_content` (DeepSeek-R1, QwQ) and <think> blocks
    # are the model's thinking and never reach the group or the session
    text = answer_text(getattr(message, "content", None))
    calls = read_tool_calls(message)
    if calls:  # the model asked for tools first (any text beside them is not the answer)
        return replace(counted, ok=True, tool_calls=calls)
    if not text:
        return replace(counted, error=LLMError.EMPTY)
    return replace(counted, ok=True, text=text)


def _with_latency(result: CompletionResult, started: float) -> CompletionResult:
    return replace(result, latency_ms=(time.perf_counter() - started) * 1000)
