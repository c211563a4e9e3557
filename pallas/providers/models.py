"""Per-model capabilities and wire quirks: context window, output budget, prices, how to ask.

Declared in group config (`[models."<model name>"]`, matched by exact name, then the longest
prefix, then `[models.default]`). Under what the operator writes sit the built-in profiles of
the common families (`BUILTIN_PROFILES`: OpenAI o-series, DeepSeek, Qwen, GLM, Kimi, …), so
`deepseek-reasoner` or `o3-mini` work without a line of config; a key the operator sets wins
over the built-in value, field by field.

Image input is off unless a model declares it: text-only models never receive image blocks.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

SystemPlacement = Literal["anywhere", "first_only"]
MaxTokensParam = Literal["max_tokens", "max_completion_tokens"]
# How a caller that wants a JSON answer may ask for it: a JSON schema (OpenAI structured
# outputs, Ollama), any JSON object (DeepSeek, DashScope), or only in the prompt.
StructuredOutput = Literal["json_schema", "json_object", "none"]


class ModelProfile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    context_window: int = Field(default=32_000, ge=1_000)  # tokens
    reserved_output: int = Field(default=800, ge=64)  # tokens kept free for the answer
    max_output_tokens: int = Field(default=400, ge=16)  # answer tokens asked for
    temperature: float = Field(default=0.8, ge=0, le=2)  # sampling temperature
    supports_images: bool = False  # images are sent to this model
    image_tokens: int = Field(default=765, ge=0, le=20_000)  # budget cost of one attached image
    # prices per 1,000,000 tokens (any currency; the console's usage page shows cost when set);
    # cached_input_price bills the prompt tokens the provider served from its prefix cache
    # (unset: billed at input_price)
    input_price: float | None = Field(default=None, ge=0)  # price per 1M prompt tokens
    # price per 1M cached prompt tokens
    cached_input_price: float | None = Field(default=None, ge=0)
    output_price: float | None = Field(default=None, ge=0)  # price per 1M answer tokens

    # --- how the model is asked (wire quirks) ---
    send_temperature: bool = True  # o-series and most reasoning models refuse `temperature`
    max_tokens_param: MaxTokensParam = "max_tokens"  # o-series want max_completion_tokens
    # "first_only": the endpoint refuses a system message after the first one, so the
    # per-turn block of the cache-aware layout rides in the last user message instead
    system_messages: SystemPlacement = "anywhere"
    strict_alternation: bool = False  # user / assistant must alternate (some vLLM templates)
    # tokens a reasoning model may think before it answers: added to the output budget sent
    # (`max_tokens` counts the thinking on DeepSeek-R1, o-series, QwQ), never to the reply
    thinking_budget: int = Field(default=0, ge=0, le=64_000)
    extra_body: dict[str, Any] = Field(default_factory=dict)  # sent as is (enable_thinking …)
    # `response_format` for calls that want JSON (memory extraction): unknown models get
    # "none" (the JSON is asked for in the prompt only; an endpoint may refuse the field)
    structured_output: StructuredOutput = "none"


def default_profiles() -> dict[str, ModelProfile]:
    return {"default": ModelProfile()}


_O_SERIES = {
    "send_temperature": False,
    "max_tokens_param": "max_completion_tokens",
    "thinking_budget": 2000,
}
# Family name prefix → the wire quirks that differ from `ModelProfile()` (the longest prefix
# wins). Capacities (context window, image input, prices) stay the operator's to declare.
_SCHEMA: dict[str, Any] = {"structured_output": "json_schema"}
BUILTIN_PROFILES: dict[str, dict[str, Any]] = {
    # OpenAI structured outputs: gpt-4o (mini) and later; gpt-4 / gpt-3.5 stay "none"
    "gpt-4o": dict(_SCHEMA),
    "gpt-4.1": dict(_SCHEMA),
    "gpt-5": {**_O_SERIES, **_SCHEMA},
    "o1": {**_O_SERIES, **_SCHEMA},
    "o3": {**_O_SERIES, **_SCHEMA},
    "o4": {**_O_SERIES, **_SCHEMA},
    # DeepSeek's JSON Output: json_object (no schema); R1 has no JSON mode
    "deepseek": {"structured_output": "json_object"},
    # R1 ignores temperature and spends max_tokens on its reasoning_content first
    "deepseek-reasoner": {"send_temperature": False, "thinking_budget": 2000},
    "deepseek-r1": {"send_temperature": False, "thinking_budget": 2000},  # Ollama / vLLM builds
    # DashScope compatible mode: one leading system message; Qwen3 refuses non-streaming
    # calls with thinking on; json_object in non-thinking mode
    "qwen": {"system_messages": "first_only", "structured_output": "json_object"},
    "qwen3": {
        "system_messages": "first_only",
        "extra_body": {"enable_thinking": False},
        "structured_output": "json_object",
    },
    "qwq": {"system_messages": "first_only", "thinking_budget": 2000},
}


def builtin_profile(model: str) -> dict[str, Any]:
    """The built-in values of `model`'s family (longest matching prefix; {} when unknown)."""
    name = model.lower().rsplit("/", 1)[-1]  # "deepseek-ai/DeepSeek-R1" on SiliconFlow
    matches = [prefix for prefix in BUILTIN_PROFILES if name.startswith(prefix)]
    return dict(BUILTIN_PROFILES[max(matches, key=len)]) if matches else {}


def _configured(profiles: dict[str, ModelProfile], model: str) -> ModelProfile | None:
    if model in profiles:
        return profiles[model]
    prefixes = [name for name in profiles if name != "default" and model.startswith(name)]
    if prefixes:
        return profiles[max(prefixes, key=len)]
    return None


def profile_for(profiles: dict[str, ModelProfile], model: str) -> ModelProfile:
    """Built-in family values, under `[models.default]`, under the model's own entry (exact
    name first, then the longest matching prefix); only keys an operator set override."""
    values = builtin_profile(model)
    for layer in (profiles.get("default"), _configured(profiles, model)):
        if layer is not None:
            values.update(layer.model_dump(exclude_unset=True))
    return ModelProfile.model_validate(values)


def price_of(
    profile: ModelProfile, prompt: int, cached: int, completion: int, *, cache: bool = True
) -> float | None:
    """What the provider bills (None when the profile has no prices): uncached prompt tokens
    at input_price, cache hits at cached_input_price (input_price when unset), completion
    tokens (thinking included) at output_price. `cache=False`: as if nothing had hit."""
    if profile.input_price is None and profile.output_price is None:
        return None
    input_price = profile.input_price or 0.0
    cached_price = profile.cached_input_price if cache else None
    hits = min(cached, prompt) if cached_price is not None else 0
    return (
        (prompt - hits) * input_price
        + hits * (cached_price or 0.0)
        + completion * (profile.output_price or 0.0)
    ) / 1_000_000
