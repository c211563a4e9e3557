"""A small OpenAI-compatible HTTP server on 127.0.0.1 for tests.

Serves `/v1/chat/completions` and `/v1/embeddings`, records every request body, and answers
from a script: plain replies, HTTP errors, delays, malformed bodies. The bot reaches it
through the real `openai` client. `GET /v1/models` lists `models` (none by default, so the
bot's start-up embedding probe finds no embedding model and stays off); `embed` makes the
vectors and `embeddings_status` other than 200 fails every embeddings call.

`FakeOpenAI(flavor=...)` makes the chat answers speak a provider family's wire format
("openai", "deepseek", "qwen", "ollama", "vllm": usage fields, error bodies, request quirks,
visible thinking; see `tests/harness/fake_providers.py`). `simulate_cache=True` (implied by
any flavor but "openai") reports `prompt_tokens` as the prompt's `chars // 2` and cached
tokens from a prefix-cache simulation. `fail_for(seconds, status)` makes every chat request
in the next `seconds` fail without consuming the script.

`FakeOpenAI(in_process=True)` serves the same app without a socket: `start()` starts no
uvicorn server and `http_client()` is a client whose requests reach the app in-process (hand
it to `LLMClient(http_client=...)`, or to `start_app` / `PallasRuntime.start` as
`llm_http_client`). Unit and integration tests use it; tests/e2e keep the real server, since
the bot process reaches the model over real sockets there.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import math
import re
import socket
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import httpx2
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response

from tests.harness.fake_providers import (
    REPORTS_CACHE,
    Flavor,
    PromptCache,
    build_usage,
    check_flavor,
    check_quirks,
    error_body,
    ollama_content,
    serialize_prompt,
    thinking_for,
    tokens_of,
)


@dataclass
class Scripted:
    text: str | None = None  # assistant content
    status: int = 200
    delay: float = 0.0
    raw_body: str | None = None  # sent verbatim (garbage / malformed JSON)
    # reported (prompt_tokens, completion_tokens) for the answer; with cache simulation on
    # (`simulate_cache` or a flavor other than "openai") prompt_tokens is the prompt's chars // 2
    usage: tuple[int, int] = (100, 10)
    # thinking tokens, reported where the flavor has a field and added to completion_tokens;
    # 0 = none, or for a reasoning model's visible thinking its chars // 2
    reasoning_tokens: int = 0
    # extra response headers (e.g. Retry-After on a 429), on error and success answers alike
    headers: dict[str, str] = field(default_factory=dict)
    # the assistant content computed from the request body (replaces `text`): an answer that
    # names what the request showed, e.g. a ref the prompt assigned
    respond: Callable[[dict[str, Any]], str] | None = None
    # functions the model asks for: (name, arguments JSON) each; the answer's text is `text`
    # (usually None) and finish_reason "tool_calls"
    tool_calls: list[tuple[str, str]] = field(default_factory=list)


def tool_call(name: str, **arguments: Any) -> Scripted:
    """A scripted answer that asks for one function (the request must have offered it)."""
    return Scripted(tool_calls=[(name, json.dumps(arguments, ensure_ascii=False))])


@dataclass
class RecordedRequest:
    path: str
    body: dict[str, Any]
    headers: dict[str, str]
    at: float = field(default_factory=time.monotonic)
    # answered chat requests: the simulated cached prompt tokens (in the flavor's unit)
    cached_tokens: int | None = None

    @property
    def messages(self) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = self.body.get("messages", [])
        return messages

    @property
    def system_prompt(self) -> str:
        return "\n\n".join(
            str(m.get("content")) for m in self.messages if m.get("role") == "system"
        )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def fake_embedding(text: str, dims: int = 64) -> list[float]:
    """Deterministic bag-of-characters embedding: similar texts get similar vectors."""
    vector = [0.0] * dims
    for ch in text:
        vector[int(hashlib.md5(ch.encode()).hexdigest(), 16) % dims] += 1.0
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector]


class InProcessTransport(httpx2.AsyncBaseTransport):
    """httpx's ASGI transport to an app in this process, with the request's read timeout
    honoured (the ASGI transport ignores timeouts; a scripted `delay` must still time out)."""

    def __init__(self, app: FastAPI) -> None:
        self._asgi = httpx2.ASGITransport(app=app)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        timeouts = request.extensions.get("timeout") or {}
        read = timeouts.get("read")
        try:
            return await asyncio.wait_for(self._asgi.handle_async_request(request), read)
        except TimeoutError as exc:
            raise httpx2.ReadTimeout("in-process fake model timed out", request=request) from exc


class FakeOpenAI:
    def __init__(
        self,
        default_reply: str = "好哦",
        *,
        flavor: Flavor = "openai",
        simulate_cache: bool = False,
        in_process: bool = False,
    ) -> None:
        self.flavor: Flavor = check_flavor(flavor)
        self.simulate_cache = simulate_cache or flavor != "openai"
        self.in_process = in_process
        self._clients: list[httpx2.AsyncClient] = []
        self.port = free_port()
        self._server: uvicorn.Server | None = None
        self._task: asyncio.Task[None] | None = None
        self._arrived = asyncio.Event()
        self.app = self._build_app()
        self.reset(default_reply)

    def reset(self, default_reply: str = "好哦") -> None:
        """Back to a new server's state (no script, no recorded requests, no outage, the
        default files, models and embeddings): a server one bot keeps across a module's tests
        (tests/e2e/conftest.py, `SHARED_BOT`) starts each test as a new one would."""
        self.default_reply = default_reply
        self.prompt_cache = PromptCache()
        self._failing_until = 0.0
        self._failing_status = 500
        self.script: deque[Scripted] = deque()
        self.requests: list[RecordedRequest] = []
        # /v1/audio/transcriptions answers with this text; `files` are served at /files/<name>
        self.transcript = "这是一段语音转写"
        self.files: dict[str, tuple[bytes, str]] = {}
        self.models: list[str] = []  # what GET /v1/models lists
        # when set, a chat request must carry `Authorization: Bearer <api_key>` (else 401)
        self.api_key: str | None = None
        self.model_list_calls = 0
        self.embed: Callable[[str], list[float]] = fake_embedding
        self.embeddings_status = 200
        self.embeddings_delay = 0.0  # seconds each embeddings call takes

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def enqueue(self, *items: Scripted | str) -> None:
        for item in items:
            self.script.append(Scripted(text=item) if isinstance(item, str) else item)

    def fail_for(self, seconds: float, status: int = 500) -> None:
        """Every chat request arriving in the next `seconds` answers `status` (in the flavor's
        error shape); scripted items wait untouched until then. `fail_for(0)` ends it early."""
        self._failing_until = time.monotonic() + seconds
        self._failing_status = status

    def embedding_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.endswith("/embeddings")]

    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    async def wait_for_requests(self, count: int, timeout: float = 10.0) -> list[RecordedRequest]:
        deadline = time.monotonic() + timeout
        while len(self.chat_requests()) < count:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(
                    f"expected {count} chat requests, saw {len(self.chat_requests())}"
                )
            self._arrived.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._arrived.wait(), remaining)
        return self.chat_requests()

    def _build_app(self) -> FastAPI:
        app = FastAPI()

        @app.post("/v1/chat/completions")
        async def chat(request: Request) -> Response:
            arrived = time.monotonic()
            body = await request.json()
            recorded = RecordedRequest(request.url.path, body, dict(request.headers), arrived)
            self.requests.append(recorded)
            self._arrived.set()
            if self.api_key is not None and (
                request.headers.get("authorization") != f"Bearer {self.api_key}"
            ):
                return JSONResponse(
                    error_body(self.flavor, 401, "Incorrect API key provided"), status_code=401
                )
            if arrived < self._failing_until:
                status = self._failing_status
                return JSONResponse(
                    error_body(self.flavor, status, "simulated outage"), status_code=status
                )
            refused = check_quirks(self.flavor, body)
            if refused is not None:
                return JSONResponse(refused.body, status_code=refused.status)
            item = self.script.popleft() if self.script else Scripted(text=self.default_reply)
            if item.respond is not None:
                item = replace(item, text=item.respond(body))
            if item.delay:
                await asyncio.sleep(item.delay)
            if item.raw_body is not None:
                return PlainTextResponse(
                    item.raw_body,
                    status_code=item.status,
                    media_type="application/json",
                    headers=item.headers,
                )
            if item.status != 200:
                return JSONResponse(
                    error_body(self.flavor, item.status, "scripted failure"),
                    status_code=item.status,
                    headers=item.headers,
                )
            payload = self._flavored(self._completion(body, item), body, item, recorded)
            return JSONResponse(payload, headers=item.headers)

        @app.post("/v1/embeddings")
        async def embeddings(request: Request) -> Response:
            body = await request.json()
            self.requests.append(RecordedRequest(request.url.path, body, dict(request.headers)))
            if self.embeddings_delay:
                await asyncio.sleep(self.embeddings_delay)
            if self.embeddings_status != 200:
                status = self.embeddings_status
                return JSONResponse(error_body(self.flavor, status, "no such model"), status)
            inputs = body.get("input")
            texts = [inputs] if isinstance(inputs, str) else list(inputs or [])
            data = [
                {"object": "embedding", "index": i, "embedding": self.embed(str(t))}
                for i, t in enumerate(texts)
            ]
            return JSONResponse(
                {
                    "object": "list",
                    "data": data,
                    "model": body.get("model"),
                    "usage": {"prompt_tokens": 1, "total_tokens": 1},
                }
            )

        @app.get("/v1/models")
        async def models() -> Response:
            self.model_list_calls += 1
            listed = [{"id": m, "object": "model", "owned_by": "fake"} for m in self.models]
            return JSONResponse({"object": "list", "data": listed})

        @app.post("/v1/audio/transcriptions")
        async def transcriptions(request: Request) -> Response:
            raw = await request.body()  # multipart: the model name and the audio file
            model = re.search(rb'name="model"\r\n\r\n([^\r]*)', raw)
            body = {"model": model.group(1).decode() if model else "", "bytes": len(raw)}
            self.requests.append(RecordedRequest(request.url.path, body, dict(request.headers)))
            return JSONResponse({"text": self.transcript})

        @app.get("/files/{name}")
        async def files(name: str) -> Response:
            if name not in self.files:
                return PlainTextResponse("not found", status_code=404)
            data, content_type = self.files[name]
            return Response(data, media_type=content_type)

        return app

    def http_client(self) -> httpx2.AsyncClient:
        """A client that reaches this fake's app in-process, whatever the URL's host (closed
        by `stop()`)."""
        client = httpx2.AsyncClient(transport=InProcessTransport(self.app))
        self._clients.append(client)
        return client

    def file_url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.port}/files/{name}"

    @staticmethod
    def _completion(body: dict[str, Any], item: Scripted) -> dict[str, Any]:
        prompt, completion = item.usage
        message: dict[str, Any] = {"role": "assistant", "content": item.text}
        if item.tool_calls:
            message["tool_calls"] = [
                {"id": f"call_{n}", "type": "function",
                 "function": {"name": name, "arguments": arguments}}
                for n, (name, arguments) in enumerate(item.tool_calls)
            ]  # fmt: skip
        return {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "fake"),
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls" if item.tool_calls else "stop",
                    "message": message,
                }
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            },
        }

    def _flavored(
        self,
        payload: dict[str, Any],
        body: dict[str, Any],
        item: Scripted,
        recorded: RecordedRequest,
    ) -> dict[str, Any]:
        """`payload` (the historic OpenAI answer) in this server's flavor: usage, thinking."""
        usage = payload.get("usage") or {}
        prompt = int(usage.get("prompt_tokens", 0))
        completion = int(usage.get("completion_tokens", 0))
        text = serialize_prompt(body.get("messages") or [])
        prefix_chars = self.prompt_cache.observe(text, recorded.at)
        simulated = PromptCache.cached_tokens(self.flavor, prefix_chars, tokens_of(len(text)))
        recorded.cached_tokens = simulated
        cached = 0
        if self.simulate_cache:
            prompt = tokens_of(len(text))
            cached = simulated if self.flavor in REPORTS_CACHE else 0
        model = str(body.get("model", ""))
        thinking = thinking_for(self.flavor, model)
        reasoning = item.reasoning_tokens or (tokens_of(len(thinking)) if thinking else 0)
        message = payload["choices"][0]["message"]
        if thinking is not None and self.flavor == "deepseek":
            message["reasoning_content"] = thinking
        elif thinking is not None and self.flavor == "ollama":
            message["content"] = ollama_content(thinking, message.get("content"))
        payload["usage"] = build_usage(
            self.flavor,
            prompt_tokens=prompt,
            completion_tokens=completion + reasoning,
            cached_tokens=cached,
            reasoning_tokens=reasoning,
            model=model,
        )
        return payload

    async def start(self) -> None:
        if self.in_process:
            return  # nothing listens: requests arrive through `http_client()`
        config = uvicorn.Config(
            self.app, host="127.0.0.1", port=self.port, log_level="warning", lifespan="off"
        )
        self._server = uvicorn.Server(config)
        self._task = asyncio.create_task(self._server.serve())
        while not self._server.started:
            await asyncio.sleep(0.01)

    async def stop(self) -> None:
        for client in self._clients:
            await client.aclose()
        self._clients.clear()
        if self._server is not None:
            self._server.should_exit = True
        if self._task is not None:
            await self._task


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False)
