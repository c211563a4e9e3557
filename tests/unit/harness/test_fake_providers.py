"""The fake OpenAI-compatible server speaks each provider family's wire format.

Every flavor of `tests/harness/fake_openai.FakeOpenAI` is started on 127.0.0.1 and called with
the real `openai.AsyncOpenAI` client: usage fields, prompt-cache simulation, visible thinking,
request quirks answered with the provider's error body, scripted headers and `fail_for`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import openai
import pytest
from openai import AsyncOpenAI

from tests.harness.fake_openai import FakeOpenAI, Scripted
from tests.harness.fake_providers import (
    FLAVORS,
    PromptCache,
    build_usage,
    check_quirks,
    error_body,
    serialize_prompt,
)

StartFake = Callable[..., Awaitable[FakeOpenAI]]
HELLO: Any = [{"role": "user", "content": "你好"}]


@pytest.fixture
async def start_fake() -> AsyncIterator[StartFake]:
    started: list[FakeOpenAI] = []

    async def start(**kwargs: Any) -> FakeOpenAI:
        fake = FakeOpenAI(in_process=True, **kwargs)  # the wire format, without a socket
        await fake.start()
        started.append(fake)
        return fake

    yield start
    for fake in started:
        await fake.stop()


def client(fake: FakeOpenAI) -> AsyncOpenAI:
    return AsyncOpenAI(
        base_url=fake.base_url, api_key="k", max_retries=0, http_client=fake.http_client()
    )


async def raw_chat(fake: FakeOpenAI, model: str, messages: Any, **kwargs: Any) -> dict[str, Any]:
    """The answer's JSON as sent, through the real client."""
    async with client(fake) as llm:
        raw = await llm.chat.completions.with_raw_response.create(
            model=model, messages=messages, **kwargs
        )
    body: dict[str, Any] = raw.http_response.json()
    return body


async def refused(fake: FakeOpenAI, model: str, messages: Any, **kwargs: Any) -> dict[str, Any]:
    """The 400 body of a request the flavor refuses."""
    async with client(fake) as llm:
        with pytest.raises(openai.BadRequestError) as caught:
            await llm.chat.completions.create(model=model, messages=messages, **kwargs)
    assert caught.value.status_code == 400
    body: dict[str, Any] = caught.value.response.json()
    return body


def cached_conversation(system_chars: int, user: str) -> Any:
    return [{"role": "system", "content": "设" * system_chars}, {"role": "user", "content": user}]


# --------------------------------------------------------------------------- default / openai


async def test_default_server_reports_the_scripted_usage(start_fake: StartFake) -> None:
    fake = await start_fake()
    fake.enqueue(Scripted(text="在的", usage=(120, 8)))
    async with client(fake) as llm:
        reply = await llm.chat.completions.create(model="gpt-4o-mini", messages=HELLO)
    assert reply.choices[0].message.content == "在的"
    assert reply.usage is not None
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (120, 8)
    assert reply.usage.total_tokens == 128
    assert reply.usage.prompt_tokens_details is not None
    assert reply.usage.prompt_tokens_details.cached_tokens == 0
    assert reply.usage.completion_tokens_details is not None
    assert reply.usage.completion_tokens_details.reasoning_tokens == 0
    # the same prompt again: the default server does not simulate the cache
    body = await raw_chat(fake, "gpt-4o-mini", HELLO)
    assert body["usage"]["prompt_tokens"] == 100
    assert body["usage"]["prompt_tokens_details"] == {"cached_tokens": 0}


async def test_openai_reasoning_tokens_count_inside_completion(start_fake: StartFake) -> None:
    fake = await start_fake()
    fake.enqueue(Scripted(text="想好了", usage=(100, 10), reasoning_tokens=30))
    body = await raw_chat(fake, "o3-mini", HELLO)
    assert body["usage"]["completion_tokens"] == 40
    assert body["usage"]["total_tokens"] == 140
    assert body["usage"]["completion_tokens_details"] == {"reasoning_tokens": 30}


async def test_openai_cache_simulation_from_1024_tokens_in_128_steps(
    start_fake: StartFake,
) -> None:
    fake = await start_fake(simulate_cache=True)
    first = await raw_chat(fake, "gpt-4o", cached_conversation(3000, "甲"))
    # "system" + 3000 chars + "user" + 1 char = 3011 chars → 1505 tokens, nothing cached yet
    assert first["usage"]["prompt_tokens"] == 3011 // 2
    assert first["usage"]["prompt_tokens_details"] == {"cached_tokens": 0}
    second = await raw_chat(fake, "gpt-4o", cached_conversation(3000, "乙"))
    # 3010 common chars → 1505 tokens → 11 × 128
    assert second["usage"]["prompt_tokens_details"] == {"cached_tokens": 1408}
    assert fake.chat_requests()[1].cached_tokens == 1408

    short = await start_fake(simulate_cache=True)
    await raw_chat(short, "gpt-4o", cached_conversation(1500, "甲"))
    again = await raw_chat(short, "gpt-4o", cached_conversation(1500, "乙"))
    # 1510 common chars → 755 tokens: under OpenAI's 1024-token minimum
    assert again["usage"]["prompt_tokens_details"] == {"cached_tokens": 0}


@pytest.mark.parametrize("model", ["o1", "o3-mini", "o4-mini"])
async def test_openai_reasoning_models_refuse_max_tokens(start_fake: StartFake, model: str) -> None:
    fake = await start_fake()
    fake.enqueue("留着")
    body = await refused(fake, model, HELLO, max_tokens=100)
    assert body["error"]["type"] == "invalid_request_error"
    assert body["error"]["param"] == "max_tokens"
    assert body["error"]["code"] == "unsupported_parameter"
    assert body["error"]["message"].startswith("Unsupported parameter: 'max_tokens'")
    assert "Use 'max_completion_tokens' instead." in body["error"]["message"]
    # the refusal did not consume the script; the documented parameters are accepted
    async with client(fake) as llm:
        reply = await llm.chat.completions.create(
            model=model, messages=HELLO, max_completion_tokens=100, temperature=1
        )
    assert reply.choices[0].message.content == "留着"


async def test_openai_reasoning_models_refuse_temperature(start_fake: StartFake) -> None:
    fake = await start_fake()
    body = await refused(fake, "o3-mini", HELLO, temperature=0.7)
    assert body["error"]["param"] == "temperature"
    assert body["error"]["type"] == "invalid_request_error"
    assert body["error"]["message"].startswith("Unsupported value: 'temperature'")
    # other models take both parameters
    ok = await raw_chat(fake, "gpt-4o-mini", HELLO, temperature=0.7, max_tokens=100)
    assert ok["choices"][0]["message"]["content"] == "好哦"


# --------------------------------------------------------------------------- deepseek


async def test_deepseek_usage_has_hit_and_miss_tokens(start_fake: StartFake) -> None:
    fake = await start_fake(flavor="deepseek")
    first = await raw_chat(fake, "deepseek-chat", cached_conversation(500, "甲"))
    usage = first["usage"]
    assert usage["prompt_tokens"] == 511 // 2
    assert (usage["prompt_cache_hit_tokens"], usage["prompt_cache_miss_tokens"]) == (0, 255)
    assert "prompt_tokens_details" not in usage and "completion_tokens_details" not in usage
    second = await raw_chat(fake, "deepseek-chat", cached_conversation(500, "乙"))
    usage = second["usage"]
    # 510 common chars → 255 tokens → 3 × 64
    assert usage["prompt_cache_hit_tokens"] == 192
    assert usage["prompt_cache_hit_tokens"] + usage["prompt_cache_miss_tokens"] == 255
    assert "reasoning_content" not in second["choices"][0]["message"]


async def test_deepseek_reasoner_sends_reasoning_content(start_fake: StartFake) -> None:
    fake = await start_fake(flavor="deepseek")
    fake.enqueue(Scripted(text="答案是四", usage=(100, 10)))
    async with client(fake) as llm:
        reply = await llm.chat.completions.create(model="deepseek-reasoner", messages=HELLO)
    message = reply.choices[0].message
    assert message.content == "答案是四"
    extra = message.model_extra or {}
    thinking = extra["reasoning_content"]
    assert (
        isinstance(thinking, str) and thinking and any("\u4e00" <= c <= "\u9fff" for c in thinking)
    )
    assert reply.usage is not None and reply.usage.completion_tokens_details is not None
    reasoning = reply.usage.completion_tokens_details.reasoning_tokens
    assert reasoning == len(thinking) // 2
    assert reply.usage.completion_tokens == 10 + reasoning


# --------------------------------------------------------------------------- qwen


async def test_qwen_usage_and_cache_in_256_steps(start_fake: StartFake) -> None:
    fake = await start_fake(flavor="qwen")
    await raw_chat(fake, "qwen-plus", cached_conversation(1200, "甲"))
    body = await raw_chat(fake, "qwen-plus", cached_conversation(1200, "乙"))
    usage = body["usage"]
    assert usage["prompt_tokens"] == 1211 // 2
    # 1210 common chars → 605 tokens → 2 × 256
    assert usage["prompt_tokens_details"] == {"cached_tokens": 512}
    assert "completion_tokens_details" not in usage


async def test_qwen_refuses_a_late_system_message(start_fake: StartFake) -> None:
    fake = await start_fake(flavor="qwen")
    messages = [
        {"role": "system", "content": "你是帕拉斯"},
        {"role": "user", "content": "你好"},
        {"role": "system", "content": "补充设定"},
    ]
    body = await refused(fake, "qwen-plus", messages)
    assert body == {
        "error": {
            "code": "invalid_parameter_error",
            "message": "System message must be at the beginning.",
            "type": "invalid_request_error",
        }
    }


async def test_qwen3_needs_thinking_off_for_non_streaming_calls(start_fake: StartFake) -> None:
    fake = await start_fake(flavor="qwen")
    body = await refused(fake, "qwen3-32b", HELLO)
    assert body == {
        "error": {
            "message": "parameter.enable_thinking must be set to false for non-streaming calls",
            "type": "invalid_request_error",
            "code": "invalid_parameter_error",
        }
    }
    await refused(fake, "qwen3-32b", HELLO, extra_body={"enable_thinking": True})
    ok = await raw_chat(fake, "qwen3-32b", HELLO, extra_body={"enable_thinking": False})
    assert ok["choices"][0]["message"]["content"] == "好哦"
    assert fake.chat_requests()[-1].body["enable_thinking"] is False


# --------------------------------------------------------------------------- ollama


async def test_ollama_usage_has_no_details(start_fake: StartFake) -> None:
    fake = await start_fake(flavor="ollama")
    await raw_chat(fake, "llama3.1:8b", cached_conversation(3000, "甲"))
    body = await raw_chat(fake, "llama3.1:8b", cached_conversation(3000, "乙"))
    assert set(body["usage"]) == {"prompt_tokens", "completion_tokens", "total_tokens"}
    assert body["choices"][0]["message"]["content"] == "好哦"
    # the simulation still ran; only the format has nowhere to report it
    assert fake.chat_requests()[-1].cached_tokens == 3010 // 2


@pytest.mark.parametrize("model", ["deepseek-r1:7b", "qwq:32b"])
async def test_ollama_thinking_models_put_think_tags_in_content(
    start_fake: StartFake, model: str
) -> None:
    fake = await start_fake(flavor="ollama")
    fake.enqueue("答案")
    async with client(fake) as llm:
        reply = await llm.chat.completions.create(model=model, messages=HELLO)
    content = reply.choices[0].message.content or ""
    assert content.startswith("<think>")
    thinking, answer = content.split("</think>\n\n")
    assert "思考" in thinking
    assert answer == "答案"


# --------------------------------------------------------------------------- vllm


async def test_vllm_usage_has_null_prompt_details(start_fake: StartFake) -> None:
    fake = await start_fake(flavor="vllm")
    messages = [
        {"role": "system", "content": "你是帕拉斯"},
        {"role": "user", "content": "你好"},
        {"role": "assistant", "content": "在的"},
        {"role": "user", "content": "今天吃什么"},
    ]
    body = await raw_chat(fake, "Qwen/Qwen2.5-7B-Instruct", messages)
    usage = body["usage"]
    assert usage["prompt_tokens_details"] is None
    assert set(usage) == {
        "prompt_tokens",
        "completion_tokens",
        "total_tokens",
        "prompt_tokens_details",
    }
    assert usage["prompt_tokens"] == len(serialize_prompt(messages)) // 2


@pytest.mark.parametrize(
    "roles",
    [
        ["user", "user"],
        ["assistant", "user"],
        ["system", "system", "user"],
        ["system", "user", "system"],
        ["user", "assistant", "assistant"],
    ],
)
async def test_vllm_refuses_roles_that_do_not_alternate(
    start_fake: StartFake, roles: list[str]
) -> None:
    fake = await start_fake(flavor="vllm")
    messages = [{"role": role, "content": "话"} for role in roles]
    body = await refused(fake, "mistral-7b", messages)
    assert body == {
        "object": "error",
        "message": "Conversation roles must alternate user/assistant/user/assistant/...",
        "type": "BadRequestError",
        "param": None,
        "code": 400,
    }


# --------------------------------------------------------------------------- errors, headers


@pytest.mark.parametrize(
    ("flavor", "expected"),
    [
        ("openai", {"error": {"message": "scripted failure", "type": "server_error"}}),
        ("deepseek", {"error": {"message": "scripted failure", "type": "server_error"}}),
        (
            "qwen",
            {
                "error": {
                    "message": "scripted failure",
                    "type": "server_error",
                    "code": "server_error",
                }
            },
        ),
        ("ollama", {"error": {"message": "scripted failure", "type": "api_error"}}),
        (
            "vllm",
            {
                "object": "error",
                "message": "scripted failure",
                "type": "InternalServerError",
                "param": None,
                "code": 500,
            },
        ),
    ],
)
async def test_scripted_errors_use_the_flavor_error_shape(
    start_fake: StartFake, flavor: str, expected: dict[str, Any]
) -> None:
    fake = await start_fake(flavor=flavor)
    fake.enqueue(Scripted(status=500))
    async with client(fake) as llm:
        with pytest.raises(openai.InternalServerError) as caught:
            await llm.chat.completions.create(model="m", messages=HELLO)
    assert caught.value.response.json() == expected


async def test_scripted_headers_on_errors_and_answers(start_fake: StartFake) -> None:
    fake = await start_fake()
    fake.enqueue(
        Scripted(status=429, headers={"Retry-After": "7"}),
        Scripted(text="好了", headers={"x-request-id": "req-1"}),
    )
    async with client(fake) as llm:
        with pytest.raises(openai.RateLimitError) as caught:
            await llm.chat.completions.create(model="gpt-4o-mini", messages=HELLO)
        assert caught.value.response.headers["retry-after"] == "7"
        raw = await llm.chat.completions.with_raw_response.create(
            model="gpt-4o-mini", messages=HELLO
        )
    assert raw.headers["x-request-id"] == "req-1"
    assert raw.parse().choices[0].message.content == "好了"


@pytest.mark.parametrize("flavor", FLAVORS)
async def test_fail_for_fails_every_request_then_recovers(
    start_fake: StartFake, flavor: str
) -> None:
    fake = await start_fake(flavor=flavor, default_reply="默认")
    fake.enqueue("恢复了")
    fake.fail_for(1.5, status=503)  # long enough for three requests on a loaded machine
    async with client(fake) as llm:
        for _ in range(3):
            with pytest.raises(openai.InternalServerError) as caught:
                await llm.chat.completions.create(model="m", messages=HELLO)
            assert caught.value.status_code == 503
        assert len(fake.script) == 1  # nothing consumed while failing
        await asyncio.sleep(1.6)
        reply = await llm.chat.completions.create(model="m", messages=HELLO)
    assert reply.choices[0].message.content == "恢复了"
    assert len(fake.chat_requests()) == 4  # the failed requests are recorded too


async def test_fail_for_zero_ends_the_outage(start_fake: StartFake) -> None:
    fake = await start_fake()
    fake.fail_for(60)
    async with client(fake) as llm:
        with pytest.raises(openai.InternalServerError):
            await llm.chat.completions.create(model="m", messages=HELLO)
        fake.fail_for(0)
        reply = await llm.chat.completions.create(model="m", messages=HELLO)
    assert reply.choices[0].message.content == "好哦"


async def test_unknown_flavor_is_refused() -> None:
    with pytest.raises(ValueError, match="flavor"):
        FakeOpenAI(flavor="claude")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- pure helpers


def test_prompt_cache_remembers_prompts_for_the_window() -> None:
    cache = PromptCache()
    assert cache.window == PromptCache.WINDOW_SECONDS == 300.0
    assert cache.observe("abcdef", at=0.0) == 0
    assert cache.observe("abcxyz", at=100.0) == 3
    assert cache.observe("abcdeq", at=299.0) == 5  # longest match wins
    assert cache.observe("abcdeq", at=700.0) == 0  # everything earlier is over 300 s old
    assert len(cache) == 1


def test_serialized_prompt_is_roles_and_text_in_order() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "设定"},
        {"role": "user", "content": [{"type": "text", "text": "看"}, {"type": "image_url"}]},
        {"role": "assistant", "content": None},
    ]
    assert serialize_prompt(messages) == "system设定user看assistant"


@pytest.mark.parametrize(
    ("flavor", "prefix_chars", "expected"),
    [
        ("openai", 2046, 0),  # 1023 tokens
        ("openai", 2048, 1024),
        ("openai", 2600, 1280),  # 1300 → 10 × 128
        ("deepseek", 200, 64),  # 100 → 64
        ("deepseek", 100, 0),
        ("qwen", 1100, 512),  # 550 → 2 × 256
        ("vllm", 101, 50),
        ("ollama", 101, 50),
    ],
)
def test_cached_tokens_are_rounded_to_the_provider_unit(
    flavor: Any, prefix_chars: int, expected: int
) -> None:
    assert PromptCache.cached_tokens(flavor, prefix_chars, prompt_tokens=10_000) == expected


def test_cached_tokens_never_exceed_the_prompt() -> None:
    assert PromptCache.cached_tokens("deepseek", 10_000, prompt_tokens=130) == 128


def test_usage_builders_and_quirks_are_pure() -> None:
    usage = build_usage("deepseek", prompt_tokens=300, completion_tokens=20, cached_tokens=128)
    assert usage == {
        "prompt_tokens": 300,
        "completion_tokens": 20,
        "total_tokens": 320,
        "prompt_cache_hit_tokens": 128,
        "prompt_cache_miss_tokens": 172,
    }
    assert check_quirks("openai", {"model": "gpt-4o", "max_tokens": 5}) is None
    reply = check_quirks("openai", {"model": "o1-mini", "max_tokens": 5})
    assert reply is not None and reply.status == 400
    assert check_quirks("deepseek", {"model": "deepseek-chat", "messages": []}) is None
    assert error_body("vllm", 429, "slow down")["type"] == "TooManyRequestsError"
