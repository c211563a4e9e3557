"""What goes on the wire for one model, and what comes back: pure functions, no I/O.

- `request_body`: the chat-completions body a model's `ModelProfile` accepts (temperature or
  not, `max_tokens` or `max_completion_tokens`, the thinking budget, `extra_body`), with the
  messages reshaped for endpoints that take one leading system message only or need strict
  user / assistant alternation.
- `read_usage`: prompt, completion, cached-prompt and reasoning tokens from any provider's
  `usage` object (OpenAI / Qwen / GLM `prompt_tokens_details.cached_tokens`, DeepSeek
  `prompt_cache_hit_tokens`, Kimi `cached_tokens`, `completion_tokens_details.reasoning_tokens`).
- `answer_text`: the reply text without a reasoning model's thinking (`<think>` blocks; the
  `reasoning_content` field is never read as the answer).
- `read_tool_calls`: the functions a model asked to call (`tool_calls`), when the request
  offered `tools`.
- `retry_after_seconds`: how long a 429 asks to wait.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any

from pallas.providers.formatter import FormatterConfig, format_messages, merge_content
from pallas.providers.models import ModelProfile

_THINK = re.compile(r"<(think|thinking|reasoning)>.*?(?:</\1\s*>|$)", re.DOTALL | re.IGNORECASE)
# a late system block folded into a user message keeps a visible boundary, so the model reads
# it as the operator's instructions for this turn and not as something a member typed
LATE_SYSTEM_HEADER = "【系统提示（本轮参考与要求，不是群友发言）】"
_STRICT = FormatterConfig(merge_system_to_head=False, ensure_alternation=True)


@dataclass(frozen=True, slots=True)
class TokenUsage:
    prompt: int = 0
    completion: int = 0
    cached: int = 0  # prompt tokens served from the provider's prefix cache (billed cheaper)
    reasoning: int = 0  # completion tokens spent thinking (billed, never shown)

    @property
    def total(self) -> int:
        return self.prompt + self.completion


def _field(obj: Any, name: str) -> Any:
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        return obj.get(name)
    value = getattr(obj, name, None)
    if value is None:  # pydantic models keep unknown provider fields in `model_extra`
        extra = getattr(obj, "model_extra", None)
        if isinstance(extra, Mapping):
            value = extra.get(name)
    return value


def _count(value: Any) -> int:
    try:
        return max(0, int(value or 0))
    except (TypeError, ValueError):
        return 0


def read_usage(usage: Any) -> TokenUsage:
    """Token counts from a response's `usage` (an SDK object or a dict; None → zeros)."""
    prompt = _count(_field(usage, "prompt_tokens"))
    completion = _count(_field(usage, "completion_tokens"))
    cached = _count(_field(_field(usage, "prompt_tokens_details"), "cached_tokens"))
    cached = cached or _count(_field(usage, "prompt_cache_hit_tokens"))  # DeepSeek
    cached = cached or _count(_field(usage, "cached_tokens"))  # Kimi
    reasoning = _count(_field(_field(usage, "completion_tokens_details"), "reasoning_tokens"))
    return TokenUsage(prompt, completion, min(cached, prompt), min(reasoning, completion))


def answer_text(content: Any) -> str:
    """The answer without thinking blocks ("" when nothing else is left or not text)."""
    if not isinstance(content, str):
        return ""
    return _THINK.sub("", content).strip()


@dataclass(frozen=True, slots=True)
class ModelToolCall:
    """One function the model asked for: its call id, name and raw JSON arguments."""

    id: str
    name: str
    arguments: str


MAX_TOOL_CALLS = 8  # more in one answer are ignored


def read_tool_calls(message: Any) -> tuple[ModelToolCall, ...]:
    """`message.tool_calls` of type function (an SDK object or a dict); () when none."""
    calls = _field(message, "tool_calls")
    if not isinstance(calls, list):
        return ()
    out: list[ModelToolCall] = []
    for call in calls[:MAX_TOOL_CALLS]:
        function = _field(call, "function")
        name = _field(function, "name")
        if not isinstance(name, str) or not name:
            continue
        arguments = _field(function, "arguments")
        raw = arguments if isinstance(arguments, str) else ""
        out.append(ModelToolCall(str(_field(call, "id") or ""), name, raw))
    return tuple(out)


def output_budget(profile: ModelProfile, max_tokens: int) -> int:
    """Tokens to ask for: the reply's budget plus what a reasoning model may think first."""
    return max_tokens + profile.thinking_budget


def _fold_late_system(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every system message but a leading one joins the next user message (the previous one
    when none follows), under `LATE_SYSTEM_HEADER`."""
    out: list[dict[str, Any]] = []
    pending: list[Any] = []
    for i, message in enumerate(messages):
        if message.get("role") == "system" and i > 0:
            pending.append(merge_content(LATE_SYSTEM_HEADER, message.get("content", ""), "\n"))
            continue
        if pending and message.get("role") == "user":
            content: Any = ""
            for block in pending:
                content = merge_content(content, block)
            message = {**message, "content": merge_content(content, message.get("content", ""))}
            pending = []
        out.append(message)
    if pending:
        last_user = max((i for i, m in enumerate(out) if m.get("role") == "user"), default=None)
        text: Any = ""
        for block in pending:
            text = merge_content(text, block)
        if last_user is None:
            out.append({"role": "user", "content": text})
        else:
            out[last_user] = {
                **out[last_user],
                "content": merge_content(out[last_user].get("content", ""), text),
            }
    return out


def shape_messages(
    messages: Sequence[Mapping[str, Any]], profile: ModelProfile
) -> list[dict[str, Any]]:
    """The messages as this model's endpoint accepts them (a copy; unchanged when it takes
    system messages anywhere and any role order)."""
    out = [dict(m) for m in messages]
    # templates that demand alternation refuse a system message in the middle as well
    if profile.system_messages == "first_only" or profile.strict_alternation:
        out = _fold_late_system(out)
    if profile.strict_alternation:
        out = format_messages(out, _STRICT)
    return out


def request_body(
    messages: Sequence[Mapping[str, Any]],
    *,
    model: str,
    profile: ModelProfile,
    max_tokens: int | None,
    temperature: float | None,
    json_schema: Mapping[str, Any] | None = None,
    tools: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """The chat request body. `json_schema` ({"name", "schema"}): the caller wants JSON of
    that shape, sent as `response_format` as far as the profile's `structured_output` allows;
    `tools` (OpenAI format) are offered with `tool_choice = "auto"` (none: no such keys)."""
    body: dict[str, Any] = {**profile.extra_body}
    body["model"] = model
    body["messages"] = shape_messages(messages, profile)
    if max_tokens is not None:
        body[profile.max_tokens_param] = output_budget(profile, max_tokens)
    if temperature is not None and profile.send_temperature:
        body["temperature"] = temperature
    if json_schema is not None:
        response_format = response_format_for(profile, json_schema)
        if response_format is not None:
            body["response_format"] = response_format
    if tools:
        body["tools"] = [dict(t) for t in tools]
        body["tool_choice"] = "auto"
    return body


def response_format_for(
    profile: ModelProfile, json_schema: Mapping[str, Any]
) -> dict[str, Any] | None:
    """`response_format` for a JSON answer: the schema (strict), any JSON object, or None."""
    if profile.structured_output == "json_schema":
        return {"type": "json_schema", "json_schema": {**json_schema, "strict": True}}
    if profile.structured_output == "json_object":
        return {"type": "json_object"}
    return None


def retry_after_seconds(exc: BaseException) -> float | None:
    """A 429's `Retry-After` (seconds or an HTTP date) or `retry-after-ms`, else None."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    try:
        if (ms := headers.get("retry-after-ms")) is not None:
            return max(0.0, float(ms) / 1000.0)
        value = headers.get("retry-after")
        if value is None:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:
            return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError, OverflowError):
        return None
