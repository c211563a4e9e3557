"""`[stickers]`: collecting and describing the stickers members send (sending: `[chat]
allow_sticker`)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class StickerConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    collect: bool = True  # add stickers members send to this group's pool
    max_bytes: int = Field(default=1024 * 1024, gt=0, le=10 * 1024 * 1024)  # bigger: skipped
    # the background job (deployment-wide: read from default.toml)
    describe_interval_s: int = Field(default=600, ge=5, le=86_400)
    describe_per_run: int = Field(default=8, ge=0, le=100)
    daily_vision_calls: int = Field(default=40, ge=0)  # per group, shared with other vision use
    max_attempts: int = Field(default=3, ge=1, le=10)  # then the sticker is marked failed
    names_in_prompt: int = Field(default=8, ge=0, le=30)  # the short list the model sees
    min_match: float = Field(default=0.34, ge=0, le=1)  # below: send no sticker at all
