"""Deployment-wide settings, read from env / `.env` the NoneBot way.

The NoneBot edge builds this model with `nonebot.get_plugin_config(PallasSettings)`; tests and
the CLI build it directly from the process environment with `PallasSettings.from_env()`.
Secrets (API keys, access tokens) only ever come from the environment.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

DEFAULT_DATABASE_URL = "sqlite+aiosqlite:///data/pallas.db"


class PallasSettings(BaseModel):
    model_config = ConfigDict(extra="ignore")

    database_url: str = DEFAULT_DATABASE_URL
    pallas_config_dir: Path = Path("config")
    pallas_data_dir: Path = Path("data")
    pallas_clock_offset_seconds: float = 0.0
    # shared ephemeral state: empty = in-memory (one process); redis://host:6379/0 = Redis
    pallas_state_url: str = ""
    pallas_state_prefix: str = ""  # namespace inside Redis: pallas:<prefix>:…

    openai_base_url: str = "https://api.openai.com/v1"
    openai_api_key: str = Field(default="", repr=False)  # never in a logged repr
    pallas_chat_model: str = "gpt-4o-mini"
    pallas_cheap_model: str = "gpt-4o-mini"
    pallas_vision_model: str = "gpt-4o-mini"
    pallas_embedding_model: str = ""  # empty = embeddings off (BM25 only)
    # memory's offline sentence encoder (in the wheel, pallas/providers/encoder_slot.py):
    # "local" (default) runs it in a process of its own, "thread" on a thread of the bot's
    # process, "off" never loads it
    pallas_sentence_encoder: str = "local"
    pallas_transcribe_model: str = ""  # empty = voice messages stay "[语音]" (no transcription)
    pallas_llm_timeout_seconds: float = Field(default=30.0, gt=0)
    pallas_llm_max_retries: int = Field(default=2, ge=0, le=6)
    # deployment-wide daily cap on reply LLM calls / tokens, all groups (0 = none)
    pallas_daily_call_cap: int = Field(default=0, ge=0)
    pallas_daily_token_cap: int = Field(default=0, ge=0)
    # web console under /console: login token (empty = generated once into data/console_token)
    pallas_console_enabled: bool = True
    pallas_console_token: str = Field(default="", repr=False)

    @field_validator("openai_api_key", "pallas_state_url", "pallas_console_token", mode="before")
    @classmethod
    def _strip_key(cls, value: object) -> object:
        return value.strip() if isinstance(value, str) else value

    @field_validator("pallas_state_prefix", mode="before")
    @classmethod
    def _plain_prefix(cls, value: object) -> object:
        if isinstance(value, int | float) and not isinstance(value, bool):
            value = str(value)  # NoneBot parses PALLAS_STATE_PREFIX=2 from .env as a number
        if isinstance(value, str):
            value = value.strip()
            if any(ch.isspace() for ch in value):
                raise ValueError("PALLAS_STATE_PREFIX must not contain whitespace")
        return value

    @property
    def replies_enabled(self) -> bool:
        return bool(self.openai_api_key)

    @property
    def groups_dir(self) -> Path:
        return self.pallas_config_dir / "groups"

    @property
    def personas_dir(self) -> Path:
        return self.pallas_config_dir / "personas"

    @property
    def worldbooks_dir(self) -> Path:
        return self.pallas_config_dir / "worldbooks"

    @classmethod
    def from_env(cls, **overrides: object) -> PallasSettings:
        """Build from the process environment (case-insensitive names), then `overrides`."""
        fields = cls.model_fields
        values: dict[str, object] = {
            key.lower(): value for key, value in os.environ.items() if key.lower() in fields
        }
        values.update(overrides)
        return cls.model_validate(values)
