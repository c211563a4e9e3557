"""Wire-format flavours of the fake OpenAI-compatible server (`tests/harness/fake_openai.py`).

Each provider family speaks the OpenAI chat-completions protocol with its own `usage` fields,
error-body shape and request quirks. Everything here is pure (no server, no I/O) so it can be
tested on its own:

- `build_usage`: the `usage` object of a completion in a flavour's format.
- `check_quirks`: the documented request a flavour refuses → an `ErrorReply`, else None.
- `error_body`: a flavour's error JSON for a status and message.
- `PromptCache`: the prefix-cache simulation (longest common character prefix with a recent
  earlier prompt, `chars // 2` tokens, rounded down to the provider's cache unit).
- `thinking_for`: the visible thinking a flavour's reasoning model adds to an answer.

Flavours (`Flavor`):
- "openai": `prompt_tokens_details.cached_tokens` (0 below 1024 tokens, then 128-token
  steps) and `completion_tokens_details.reasoning_tokens`; o1/o3/o4 models refuse
  `max_tokens` and a `temperature` other than 1.
- "deepseek": `prompt_cache_hit_tokens` + `prompt_cache_miss_tokens` (64-token steps);
  "deepseek-reasoner" answers with `reasoning_content` and reports reasoning tokens.
- "qwen" (DashScope compatible mode): `prompt_tokens_details.cached_tokens` (256-token
  steps); a system message after index 0 is refused; qwen3* models need
  `"enable_thinking": false` for non-streaming calls.
- "ollama" (its /v1 API): bare prompt/completion/total usage; deepseek-r1 / qwq models put
  `<think>…</think>\\n\\n` in front of the content.
- "vllm": `prompt_tokens_details: null`; roles must alternate user/assistant after one
  optional leading system message; errors are vLLM's flat `{"object": "error", ...}`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any, Final, Literal, get_args

Flavor = Literal["openai", "deepseek", "qwen", "ollama", "vllm"]
FLAVORS: Final[tuple[Flavor, ...]] = get_args(Flavor)

# flavours whose usage has a field for cached prompt tokens
REPORTS_CACHE: Final[frozenset[Flavor]] = frozenset({"openai", "deepseek", "qwen"})

REASONER_THINKING: Final = "嗯，群里有人在跟我说话。我先想想语气和内容，再简短地回答。"
OLLAMA_THINKING: Final = "让我思考一下该怎么回答。"


@dataclass(frozen=True)
class ErrorReply:
    status: int
    body: dict[str, Any]


def check_flavor(flavor: str) -> Flavor:
    for known in FLAVORS:
        if flavor == known:
            return known
    raise ValueError(f"unknown fake provider flavor {flavor!r}; expected one of {FLAVORS}")


# --------------------------------------------------------------------------- prompts


def message_text(content: Any) -> str:
    """The text of a message's `content`: a string, or the text parts of a parts list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(part.get("text", ""))
            for part in content
            if isinstance(part, dict) and part.get("type") == "text"
        )
    return ""


def serialize_prompt(messages: Sequence[dict[str, Any]]) -> str:
    """Each message's role followed by its content text, concatenated in order."""
    return "".join(str(m.get("role", "")) + message_text(m.get("content")) for m in messages)


def common_prefix_length(a: str, b: str) -> int:
    length = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        length += 1
    return length


def tokens_of(chars: int) -> int:
    """The fake's token count for `chars` characters: a deliberately simple `chars // 2`."""
    return chars // PromptCache.CHARS_PER_TOKEN


# --------------------------------------------------------------------------- prompt cache


class PromptCache:
    """Prefix-cache simulation shared by all flavours.

    `observe(prompt)` returns how many leading characters of `prompt` match an earlier prompt
    received within `window` seconds (the longest such match), then remembers `prompt`.
    `cached_tokens` turns that into the number a flavour reports.
    """

    WINDOW_SECONDS: Final = 300.0
    CHARS_PER_TOKEN: Final = 2
    OPENAI_UNIT: Final = 128
    OPENAI_MINIMUM: Final = 1024
    DEEPSEEK_UNIT: Final = 64
    QWEN_UNIT: Final = 256
    # ollama / vLLM report no cached tokens; the simulation still runs, unrounded
    OTHER_UNIT: Final = 1

    def __init__(
        self, window: float = WINDOW_SECONDS, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.window = window
        self.clock = clock
        self._seen: list[tuple[float, str]] = []

    def __len__(self) -> int:
        return len(self._seen)

    def clear(self) -> None:
        self._seen.clear()

    def observe(self, prompt: str, at: float | None = None) -> int:
        now = self.clock() if at is None else at
        self._seen = [(t, p) for t, p in self._seen if now - t <= self.window]
        best = 0
        for _, earlier in self._seen:
            best = max(best, common_prefix_length(earlier, prompt))
        self._seen.append((now, prompt))
        return best

    @classmethod
    def unit(cls, flavor: Flavor) -> int:
        return {
            "openai": cls.OPENAI_UNIT,
            "deepseek": cls.DEEPSEEK_UNIT,
            "qwen": cls.QWEN_UNIT,
        }.get(flavor, cls.OTHER_UNIT)

    @classmethod
    def cached_tokens(cls, flavor: Flavor, prefix_chars: int, prompt_tokens: int) -> int:
        """Cached tokens a flavour reports for a `prefix_chars` long cached prefix."""
        tokens = min(tokens_of(prefix_chars), prompt_tokens)
        if flavor == "openai" and tokens < cls.OPENAI_MINIMUM:
            return 0
        unit = cls.unit(flavor)
        return tokens // unit * unit


# --------------------------------------------------------------------------- usage


def build_usage(
    flavor: Flavor,
    *,
    prompt_tokens: int,
    completion_tokens: int,
    cached_tokens: int = 0,
    reasoning_tokens: int = 0,
    model: str = "",
) -> dict[str, Any]:
    """The `usage` object of a chat completion as `flavor` reports it."""
    usage: dict[str, Any] = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    if flavor == "openai":
        usage["prompt_tokens_details"] = {"cached_tokens": cached_tokens}
        usage["completion_tokens_details"] = {"reasoning_tokens": reasoning_tokens}
    elif flavor == "deepseek":
        usage["prompt_cache_hit_tokens"] = cached_tokens
        usage["prompt_cache_miss_tokens"] = prompt_tokens - cached_tokens
        if is_deepseek_reasoner(model):
            usage["completion_tokens_details"] = {"reasoning_tokens": reasoning_tokens}
    elif flavor == "qwen":
        usage["prompt_tokens_details"] = {"cached_tokens": cached_tokens}
    elif flavor == "vllm":
        usage["prompt_tokens_details"] = None
    return usage


# --------------------------------------------------------------------------- thinking


def is_deepseek_reasoner(model: str) -> bool:
    return model == "deepseek-reasoner"


def is_ollama_thinker(model: str) -> bool:
    return "deepseek-r1" in model or "qwq" in model


def thinking_for(flavor: Flavor, model: str) -> str | None:
    """The thinking text a flavour's reasoning model shows with its answer, if any.

    deepseek-reasoner sends it as `message.reasoning_content`; Ollama's deepseek-r1 / qwq put
    it inside `<think>…</think>` at the head of `content` (see `ollama_content`).
    """
    if flavor == "deepseek" and is_deepseek_reasoner(model):
        return REASONER_THINKING
    if flavor == "ollama" and is_ollama_thinker(model):
        return OLLAMA_THINKING
    return None


def ollama_content(thinking: str, answer: str | None) -> str:
    return f"<think>\n{thinking}\n</think>\n\n{answer or ''}"


# --------------------------------------------------------------------------- errors


def _vllm_error_type(status: int) -> str:
    try:
        name = HTTPStatus(status).phrase.replace(" ", "").replace("-", "")
    except ValueError:
        name = "Unknown"
    return name if name.endswith("Error") else f"{name}Error"


def error_body(
    flavor: Flavor, status: int, message: str, *, type_: str = "server_error"
) -> dict[str, Any]:
    """A flavour's error JSON (the openai shape is the fake's historic scripted failure)."""
    if flavor == "vllm":
        return {
            "object": "error",
            "message": message,
            "type": _vllm_error_type(status),
            "param": None,
            "code": status,
        }
    if flavor == "ollama":
        return {"error": {"message": message, "type": "api_error"}}
    if flavor == "qwen":
        return {"error": {"message": message, "type": type_, "code": type_}}
    return {"error": {"message": message, "type": type_}}


def _openai_reasoning_model(model: str) -> bool:
    return model.startswith(("o1", "o3", "o4"))


def _openai_quirks(body: dict[str, Any]) -> ErrorReply | None:
    if not _openai_reasoning_model(str(body.get("model", ""))):
        return None
    if body.get("max_tokens") is not None:
        message = (
            "Unsupported parameter: 'max_tokens' is not supported with this model. "
            "Use 'max_completion_tokens' instead."
        )
        return ErrorReply(
            400,
            {
                "error": {
                    "message": message,
                    "type": "invalid_request_error",
                    "param": "max_tokens",
                    "code": "unsupported_parameter",
                }
            },
        )
    temperature = body.get("temperature")
    if temperature is not None and temperature != 1:
        message = (
            f"Unsupported value: 'temperature' does not support {temperature} with this "
            "model. Only the default (1) value is supported."
        )
        return ErrorReply(
            400,
            {
                "error": {
                    "message": message,
                    "type": "invalid_request_error",
                    "param": "temperature",
                    "code": "unsupported_value",
                }
            },
        )
    return None


def _qwen_quirks(body: dict[str, Any]) -> ErrorReply | None:
    messages = body.get("messages") or []
    if any(m.get("role") == "system" for m in messages[1:]):
        return ErrorReply(
            400,
            {
                "error": {
                    "code": "invalid_parameter_error",
                    "message": "System message must be at the beginning.",
                    "type": "invalid_request_error",
                }
            },
        )
    if str(body.get("model", "")).startswith("qwen3") and body.get("enable_thinking") is not False:
        return ErrorReply(
            400,
            {
                "error": {
                    "message": (
                        "parameter.enable_thinking must be set to false for non-streaming calls"
                    ),
                    "type": "invalid_request_error",
                    "code": "invalid_parameter_error",
                }
            },
        )
    return None


def _vllm_quirks(body: dict[str, Any]) -> ErrorReply | None:
    roles = [str(m.get("role")) for m in body.get("messages") or []]
    if roles[:1] == ["system"]:
        roles = roles[1:]
    expected = ("user", "assistant")
    if all(role == expected[i % 2] for i, role in enumerate(roles)):
        return None
    return ErrorReply(
        400,
        error_body(
            "vllm", 400, "Conversation roles must alternate user/assistant/user/assistant/..."
        ),
    )


def check_quirks(flavor: Flavor, body: dict[str, Any]) -> ErrorReply | None:
    """The error `flavor` answers a chat request it refuses with, or None if it accepts it."""
    if flavor == "openai":
        return _openai_quirks(body)
    if flavor == "qwen":
        return _qwen_quirks(body)
    if flavor == "vllm":
        return _vllm_quirks(body)
    return None
