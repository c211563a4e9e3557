"""`[stickers]`: collecting and describing the stickers members send (sending: `[chat]
allow_sticker`)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from pallas.core.config_files import DEFAULT_ONLY


class StickerConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    collect: bool = True  # add stickers members send to this group's pool
    max_bytes: int = Field(default=1024 * 1024, gt=0, le=10 * 1024 * 1024)  # bigger: skipped
    # the background job runs once for every group: process-wide keys, read from default.toml
    # only (a group file setting them is rejected)
    describe_interval_s: int = Field(default=600, ge=5, le=86_400, json_schema_extra=DEFAULT_ONLY)
    describe_per_run: int = Field(default=8, ge=0, le=100, json_schema_extra=DEFAULT_ONLY)
    daily_vision_calls: int = Field(default=40, ge=0)  # per group, shared with other vision use
    max_attempts: int = Field(default=3, ge=1, le=10)  # then the sticker is marked failed
    names_in_prompt: int = Field(default=8, ge=0, le=30)  # the short list the model sees
    min_match: float = Field(default=0.34, ge=0, le=1)  # below: send no sticker at all
