"""What each provider family gets on the wire and what its usage fields mean to the ledger."""

from __future__ import annotations

from typing import Any

import pytest

from pallas.providers.models import ModelProfile, profile_for
from pallas.providers.wire import (
    LATE_SYSTEM_HEADER,
    TokenUsage,
    answer_text,
    read_usage,
    request_body,
    shape_messages,
)


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        # OpenAI / Qwen / GLM: cached tokens in prompt_tokens_details, reasoning in details
        (
            {"prompt_tokens": 2000, "completion_tokens": 300,
             "prompt_tokens_details": {"cached_tokens": 1536},
             "completion_tokens_details": {"reasoning_tokens": 256}},
            TokenUsage(2000, 300, 1536, 256),
        ),
        # DeepSeek: prompt_cache_hit_tokens + prompt_cache_miss_tokens == prompt_tokens
        (
            {"prompt_tokens": 900, "completion_tokens": 40, "prompt_cache_hit_tokens": 768,
             "prompt_cache_miss_tokens": 132},
            TokenUsage(900, 40, 768, 0),
        ),
        ({"prompt_tokens": 500, "completion_tokens": 9, "cached_tokens": 320},  # Kimi
         TokenUsage(500, 9, 320, 0)),
        ({"prompt_tokens": 50, "completion_tokens": 5, "prompt_tokens_details": None},  # vLLM
         TokenUsage(50, 5, 0, 0)),
        ({"prompt_tokens": 50, "completion_tokens": 5}, TokenUsage(50, 5, 0, 0)),  # Ollama
        (None, TokenUsage()),
        ({"prompt_tokens": "garbage", "completion_tokens": -3}, TokenUsage()),
        # a provider claiming more cached than sent is capped (the cost never goes negative)
        ({"prompt_tokens": 10, "completion_tokens": 1, "prompt_cache_hit_tokens": 64},
         TokenUsage(10, 1, 10, 0)),
    ],
)  # fmt: skip
def test_usage_fields_of_every_family(usage: Any, expected: TokenUsage) -> None:
    assert read_usage(usage) == expected


@pytest.mark.parametrize(
    ("content", "text"),
    [
        ("<think>先想想他在问什么</think>\n\n在的", "在的"),
        ("<THINKING>x</THINKING>好", "好"),
        ("<think>没想完就被截断了", ""),
        (None, ""),
        ("  普通回答  ", "普通回答"),
    ],
)
def test_thinking_never_becomes_the_answer(content: Any, text: str) -> None:
    assert answer_text(content) == text


MESSAGES = [
    {"role": "system", "content": "人设"},
    {"role": "user", "content": "第一句"},
    {"role": "assistant", "content": "回答"},
    {"role": "system", "content": "【本轮策略】\n- 认真"},
    {"role": "user", "content": "现在的问题"},
]


def _body(model: str, profiles: dict[str, ModelProfile] | None = None) -> dict[str, Any]:
    profile = profile_for(profiles or {}, model)
    return request_body(MESSAGES, model=model, profile=profile, max_tokens=400, temperature=0.8)


@pytest.mark.parametrize(
    ("model", "present", "absent"),
    [
        ("gpt-4o-mini", {"max_tokens": 400, "temperature": 0.8}, ("max_completion_tokens",)),
        ("deepseek-chat", {"max_tokens": 400, "temperature": 0.8}, ()),
        # R1 thinks inside max_tokens and ignores temperature
        ("deepseek-reasoner", {"max_tokens": 2400}, ("temperature",)),
        # o-series: max_completion_tokens, no temperature
        ("o3-mini", {"max_completion_tokens": 2400}, ("max_tokens", "temperature")),
        # Qwen3 on DashScope refuses a non-streaming call with thinking on
        ("qwen3-32b", {"enable_thinking": False, "max_tokens": 400}, ()),
        ("deepseek-ai/DeepSeek-R1", {"max_tokens": 2400}, ("temperature",)),  # SiliconFlow
    ],
)
def test_each_family_gets_the_parameters_it_accepts(
    model: str, present: dict[str, Any], absent: tuple[str, ...]
) -> None:
    body = _body(model)
    assert body["model"] == model
    for key, value in present.items():
        assert body[key] == value, key
    for key in absent:
        assert key not in body, key


def test_an_operator_profile_overrides_the_builtin_one_key_by_key() -> None:
    profiles = {"deepseek-reasoner": ModelProfile(thinking_budget=500, input_price=4.0)}
    body = _body("deepseek-reasoner", profiles)
    assert body["max_tokens"] == 900 and "temperature" not in body  # budget set, quirk kept
    layered = profile_for({"default": ModelProfile(max_output_tokens=120)}, "o3-mini")
    assert (layered.max_output_tokens, layered.send_temperature) == (120, False)


def test_late_system_block_rides_in_the_next_user_message_for_first_only_endpoints() -> None:
    shaped = shape_messages(MESSAGES, ModelProfile(system_messages="first_only"))
    assert [m["role"] for m in shaped] == ["system", "user", "assistant", "user"]
    last = shaped[-1]["content"]
    assert last.startswith(LATE_SYSTEM_HEADER) and last.endswith("现在的问题")
    assert "【本轮策略】" in last
    # an endpoint that takes system messages anywhere gets the messages untouched
    assert shape_messages(MESSAGES, ModelProfile()) == MESSAGES


def test_strict_alternation_merges_and_fills_roles() -> None:
    messages = [
        {"role": "system", "content": "人设"},
        {"role": "user", "content": "a"},
        {"role": "user", "content": "b"},
        {"role": "assistant", "content": "c"},
        {"role": "assistant", "content": "d"},
        {"role": "user", "content": "e"},
    ]
    shaped = shape_messages(messages, ModelProfile(strict_alternation=True))
    assert [m["role"] for m in shaped] == ["system", "user", "assistant", "user"]
    assert shaped[1]["content"] == "a\n\nb"
