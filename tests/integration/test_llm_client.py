"""The real `openai` client against the fake OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from pallas.core.clock import FakeClock
from pallas.core.db import migrate
from pallas.core.db.engine import create_engine, session_factory
from pallas.core.db.repositories.usage import UsageRepository
from pallas.core.settings import PallasSettings
from pallas.providers.client import LLMClient
from tests.harness.fake_openai import FakeOpenAI, Scripted, tool_call

MESSAGES = [{"role": "user", "content": "你好"}]


@pytest.fixture
async def server() -> AsyncIterator[FakeOpenAI]:
    fake = FakeOpenAI(in_process=True)
    await fake.start()
    yield fake
    await fake.stop()


@pytest.fixture
async def usage(tmp_path: Path) -> AsyncIterator[UsageRepository]:
    url = f"sqlite+aiosqlite:///{tmp_path / 'u.db'}"
    await migrate.upgrade(url)
    engine = create_engine(url)
    usage = UsageRepository(session_factory(engine))
    yield usage
    await usage.flush()  # its queued rows before the engine goes (`PallasRuntime.stop`'s order)
    await engine.dispose()


def _client(server: FakeOpenAI, usage: UsageRepository, clock: FakeClock, **kw) -> LLMClient:
    settings = PallasSettings(
        openai_base_url=server.base_url,
        openai_api_key="sk-test",
        pallas_llm_timeout_seconds=kw.get("timeout", 2.0),
        pallas_llm_max_retries=kw.get("retries", 0),
    )
    return LLMClient(settings, usage, clock, http_client=server.http_client())


async def test_success_records_usage(server, usage, clock) -> None:
    server.enqueue(Scripted(text="在的", usage=(120, 8)))
    result = await _client(server, usage, clock).complete("chat", MESSAGES, bot_id=1, group_id=7)
    assert result.ok and result.text == "在的"
    totals = await usage.totals(now=clock.now(), group_id=7, task="chat")
    assert (totals.calls, totals.prompt_tokens, totals.completion_tokens) == (1, 120, 8)
    request = server.chat_requests()[0]
    assert request.body == {"model": "gpt-4o-mini", "messages": MESSAGES}  # nothing added
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.headers["content-type"] == "application/json"


async def test_a_reply_body_is_sent_as_built(server, usage, clock) -> None:
    """Image parts, odd unicode and the sampling options reach the server unchanged."""
    messages = [
        {"role": "system", "content": "人设\u2028第二行 \U0001f600"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "看图"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBO"}},
            ],
        },
    ]
    server.enqueue(Scripted(text="好"))
    client = _client(server, usage, clock)
    result = await client.complete(
        "chat", messages, bot_id=1, group_id=7, max_tokens=50, temperature=0.7, model="m-1"
    )
    assert result.ok
    assert server.chat_requests()[0].body == {
        "model": "m-1",
        "messages": messages,
        "max_tokens": 50,
        "temperature": 0.7,
    }


@pytest.mark.parametrize(
    ("scripted", "error"),
    [
        (Scripted(status=500), "server_error"),
        (Scripted(status=429), "rate_limited"),
        (Scripted(raw_body="{not json"), "bad_response"),
        (Scripted(raw_body='{"choices": []}'), "bad_response"),
        (Scripted(text=""), "empty"),
        (Scripted(text=None), "empty"),
        (Scripted(text="<think>只想不说</think>"), "empty"),
        (Scripted(text="x", delay=1.5), "timeout"),
    ],
)
async def test_failures_become_quiet_results(server, usage, clock, scripted, error) -> None:
    server.enqueue(scripted)
    client = _client(server, usage, clock, timeout=1.0)
    result = await client.complete("chat", MESSAGES, bot_id=1, group_id=7)
    assert not result.ok and result.error == error and result.text == ""
    assert (await usage.totals(now=clock.now(), group_id=7)).failures == 1


async def test_retries_429_then_succeeds(server, usage, clock) -> None:
    server.enqueue(Scripted(status=429), Scripted(text="好了"))
    client = _client(server, usage, clock, retries=2)
    result = await client.complete("chat", MESSAGES, bot_id=1, group_id=7)
    assert result.ok and result.text == "好了" and len(server.chat_requests()) == 2


async def test_no_key_means_disabled_without_network(server, usage, clock) -> None:
    client = LLMClient(
        PallasSettings(openai_base_url=server.base_url),
        usage,
        clock,
        http_client=server.http_client(),
    )
    result = await client.complete("chat", MESSAGES, bot_id=1, group_id=7)
    assert result.error == "disabled" and server.requests == []


async def test_embeddings(server, usage, clock) -> None:
    settings = PallasSettings(
        openai_base_url=server.base_url, openai_api_key="k", pallas_embedding_model="emb"
    )
    llm = LLMClient(settings, usage, clock, http_client=server.http_client())
    vectors = await llm.embed(["a", "b"], bot_id=1, group_id=7)
    assert len(vectors) == 2 and len(vectors[0]) == 64


WEATHER_TOOL = {
    "type": "function",
    "function": {"name": "weather__forecast", "description": "天气", "parameters": {}},
}


async def test_offered_tools_are_sent_and_a_tool_call_answer_is_read(server, usage, clock) -> None:
    server.enqueue(tool_call("weather__forecast", city="北京"))
    client = _client(server, usage, clock)
    result = await client.complete("chat", MESSAGES, bot_id=1, group_id=7, tools=[WEATHER_TOOL])
    assert result.ok and result.text == ""
    assert [(c.name, c.arguments) for c in result.tool_calls] == [
        ("weather__forecast", '{"city": "北京"}')
    ]
    body = server.chat_requests()[0].body
    assert body["tools"] == [WEATHER_TOOL] and body["tool_choice"] == "auto"
