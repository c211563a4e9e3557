"""The bot's own rule tools as model-callable functions: the request goes through the rule."""

from __future__ import annotations

import random

import pytest

from pallas.features.tools import ToolEnv, default_registry, local_tools, run_local


def test_every_local_tool_is_offered_with_one_request_argument() -> None:
    tools = local_tools(default_registry())
    assert [t.name for t in tools] == ["calc", "dice", "choose", "countdown", "activity"]
    assert all(t.server == "local" and t.input_schema["required"] == ["request"] for t in tools)


@pytest.mark.parametrize(
    ("name", "request_text", "ok", "reason", "text"),
    [
        ("calc", "算一下 12*34+5", True, "ok", "计算：12*34+5 = 413"),
        ("calc", "今天天气怎么样", False, "not_understood", ""),
        ("calc", "掷个骰子", False, "not_understood", ""),  # another tool's request
        ("nope", "算一下 1+1", False, "not_understood", ""),
    ],
)
async def test_run_local(name: str, request_text: str, ok: bool, reason: str, text: str) -> None:
    env = ToolEnv(1, 2, 3, now=1_760_000_000.0, rng=random.Random(1))
    result = await run_local(default_registry(), name, {"request": request_text}, env, 2.0)
    assert (result.ok, result.reason) == (ok, reason)
    assert result.text.startswith(text)
