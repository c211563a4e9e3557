"""Per-model capabilities: context window, reserved output, image input, prices.

Declared in group config (`[models."<model name>"]`), falling back to `[models.default]`.
Image input is off unless a model declares it: text-only models never receive image blocks.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ModelProfile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    context_window: int = Field(default=32_000, ge=1_000)  # tokens
    reserved_output: int = Field(default=800, ge=64)  # tokens kept free for the answer
    max_output_tokens: int = Field(default=400, ge=16)
    temperature: float = Field(default=0.8, ge=0, le=2)
    supports_images: bool = False
    image_tokens: int = Field(default=765, ge=0, le=20_000)  # budget cost of one attached image
    # prices per 1,000,000 tokens (any currency; the console's usage page shows cost when set)
    input_price: float | None = Field(default=None, ge=0)
    output_price: float | None = Field(default=None, ge=0)


def default_profiles() -> dict[str, ModelProfile]:
    return {"default": ModelProfile()}


def profile_for(profiles: dict[str, ModelProfile], model: str) -> ModelProfile:
    """Exact model name first, then the longest matching prefix (`"gpt-4o"`), then default."""
    if model in profiles:
        return profiles[model]
    prefixes = [name for name in profiles if name != "default" and model.startswith(name)]
    if prefixes:
        return profiles[max(prefixes, key=len)]
    return profiles.get("default", ModelProfile())
