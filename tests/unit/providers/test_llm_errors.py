"""What a provider's answer becomes, read off an in-memory transport (no socket, no server).

Each row is one way a real provider answers; the result is what the turn and the console see.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx2
import pytest

from pallas.core.clock import FakeClock
from pallas.core.settings import PallasSettings
from pallas.providers.client import CompletionResult, LLMClient, LLMError

Handler = Callable[[httpx2.Request], httpx2.Response]
MESSAGES = [{"role": "user", "content": "在吗"}]


def _completion(content: object, usage: tuple[int, int] = (10, 2)) -> httpx2.Response:
    body = {
        "id": "c1",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": usage[0],
            "completion_tokens": usage[1],
            "total_tokens": sum(usage),
        },
    }
    return httpx2.Response(200, json=body)


def _status(code: int) -> Handler:
    return lambda request: httpx2.Response(code, json={"error": {"message": f"status {code}"}})


def _raises(exc: Exception) -> Handler:
    def handler(request: httpx2.Request) -> httpx2.Response:
        raise exc

    return handler


async def _complete(handler: Handler, *, key: str = "sk-test") -> CompletionResult:
    http = httpx2.AsyncClient(transport=httpx2.MockTransport(handler))
    settings = PallasSettings(
        openai_base_url="http://provider.test/v1", openai_api_key=key, pallas_llm_max_retries=0
    )
    client = LLMClient(settings, None, FakeClock(), http_client=http)
    try:
        return await client.complete("chat", MESSAGES, bot_id=1, group_id=7)
    finally:
        await client.close()


@pytest.mark.parametrize(
    ("handler", "error", "status"),
    [
        (_status(500), LLMError.SERVER_ERROR, 500),
        (_status(503), LLMError.SERVER_ERROR, 503),
        (_status(429), LLMError.RATE_LIMITED, 429),
        (_status(401), LLMError.CLIENT_ERROR, 401),  # a wrong key
        (_status(404), LLMError.CLIENT_ERROR, 404),  # a model the provider does not have
        (_status(400), LLMError.CLIENT_ERROR, 400),  # e.g. the context is too long
        (_raises(httpx2.ReadTimeout("slow")), LLMError.TIMEOUT, None),
        (_raises(httpx2.ConnectError("refused")), LLMError.CONNECTION_ERROR, None),
        (lambda r: httpx2.Response(200, text="<html>gateway</html>"), LLMError.BAD_RESPONSE, None),
        (lambda r: httpx2.Response(200, json={"choices": []}), LLMError.BAD_RESPONSE, None),
        (lambda r: _completion(""), LLMError.EMPTY, None),
        (lambda r: _completion(None), LLMError.EMPTY, None),
        (lambda r: _completion("<think>想了想</think>  "), LLMError.EMPTY, None),
        (lambda r: _completion("<think>没想完"), LLMError.EMPTY, None),
    ],
)
async def test_a_failed_call_says_why(
    handler: Handler, error: LLMError, status: int | None
) -> None:
    result = await _complete(handler)
    assert (result.ok, result.text, result.error, result.http_status) == (False, "", error, status)


async def test_the_error_reads_as_its_stable_name() -> None:
    result = await _complete(_status(502))
    assert f"error:{result.error}" == "error:server_error"  # what snapshots and logs record
    assert json.dumps({"e": result.error}) == '{"e": "server_error"}'


async def test_a_good_answer_keeps_text_and_usage() -> None:
    result = await _complete(lambda r: _completion("在的", usage=(120, 8)))
    assert (result.ok, result.text, result.error, result.http_status) == (True, "在的", None, None)
    assert (result.prompt_tokens, result.completion_tokens) == (120, 8)


async def test_no_key_sends_nothing() -> None:
    seen: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return _completion("x")

    result = await _complete(handler, key="")
    assert result.error is LLMError.DISABLED and seen == []


async def test_the_request_goes_to_the_configured_endpoint_with_the_key() -> None:
    seen: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return _completion("好")

    await _complete(handler)
    (request,) = seen
    assert str(request.url) == "http://provider.test/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test"
    assert json.loads(request.content) == {"model": "gpt-4o-mini", "messages": MESSAGES}
