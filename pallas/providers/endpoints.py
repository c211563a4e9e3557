"""Where each task's calls go: the primary endpoint, then the backups of `config/providers.toml`.

The primary is the deployment's `OPENAI_BASE_URL` / `OPENAI_API_KEY` with the task's model
(`PALLAS_CHAT_MODEL`, …). Backups are listed per task, tried in order when the one before
fails (timeout, 5xx, 429, connection error)::

    [[chat]]
    name = "deepseek"
    base_url = "https://api.deepseek.com/v1"
    api_key_env = "DEEPSEEK_API_KEY"     # the key's *variable*: keys only come from the env
    model = "deepseek-chat"

    [breaker]
    failures = 3          # failures in a row that open an endpoint's breaker
    open_seconds = 60     # how long it is skipped before one call probes it again

A missing file means no backups; a broken one is logged and ignored (the primary still
answers), so a typo never silences the bot.
"""

from __future__ import annotations

import logging
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from pallas.core.settings import PallasSettings

log = logging.getLogger("pallas.llm")

Task = Literal["chat", "cheap", "vision", "embedding"]
TASKS: tuple[Task, ...] = ("chat", "cheap", "vision", "embedding")
PRIMARY = "primary"
PROVIDERS_FILE = "providers.toml"
NO_KEY = "none"  # what the SDK sends to an endpoint that needs no key (a home Ollama)


def refuse_literal_key(data: Any) -> Any:
    """A config table with a literal `api_key` is refused (keys come from the environment or
    the console's secrets file; the table names the variable with `api_key_env`)."""
    if isinstance(data, Mapping) and "api_key" in data:
        raise ValueError(
            "api_key in a config file is refused: keys only come from the environment; "
            "name the variable with api_key_env"
        )
    return data


class BackupEndpoint(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]{1,32}$")
    base_url: str = Field(pattern=r"^https?://")
    api_key_env: str = ""  # the environment variable holding the key ("" = no key)
    model: str = ""  # "" = the task's model (PALLAS_CHAT_MODEL, …)

    @model_validator(mode="before")
    @classmethod
    def _no_literal_key(cls, data: Any) -> Any:
        return refuse_literal_key(data)


class BreakerConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    failures: int = Field(default=3, ge=1, le=100)
    open_seconds: float = Field(default=60.0, ge=1, le=3600)


class ProvidersConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    chat: tuple[BackupEndpoint, ...] = ()
    cheap: tuple[BackupEndpoint, ...] = ()
    vision: tuple[BackupEndpoint, ...] = ()
    embedding: tuple[BackupEndpoint, ...] = ()
    breaker: BreakerConfig = Field(default_factory=BreakerConfig)
    # a 429's Retry-After is waited out on the same endpoint when it is at most this long
    # (and the turn's deadline allows); a longer one moves on to the next endpoint
    retry_after_max_s: float = Field(default=5.0, ge=0, le=60)
    deadline_s: float = Field(default=60.0, ge=1, le=600)  # one call, every endpoint tried

    @model_validator(mode="after")
    def _unique_names(self) -> ProvidersConfig:
        for task in TASKS:
            names = [e.name for e in getattr(self, task)]
            if PRIMARY in names or len(set(names)) != len(names):
                raise ValueError(f"[[{task}]] names must be unique and not {PRIMARY!r}")
        return self


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One resolved endpoint of a task's chain (the key read from the environment)."""

    name: str
    base_url: str
    api_key: str
    model: str

    @property
    def label(self) -> str:
        return f"{self.name} ({self.model})" if self.model else self.name


def load_providers(config_dir: Path) -> ProvidersConfig:
    """`config/providers.toml`, or no backups when it is missing or broken (logged)."""
    path = config_dir / PROVIDERS_FILE
    if not path.is_file():
        return ProvidersConfig()
    try:
        return ProvidersConfig.model_validate(tomllib.loads(path.read_text("utf-8")))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, ValidationError) as exc:
        log.error("%s ignored, no backup endpoints: %s", path, exc)
        return ProvidersConfig()


def task_model(settings: PallasSettings, task: Task) -> str:
    return {
        "chat": settings.pallas_chat_model,
        "cheap": settings.pallas_cheap_model,
        "vision": settings.pallas_vision_model,
        "embedding": settings.pallas_embedding_model,
    }[task]


def resolve_chain(
    settings: PallasSettings,
    providers: ProvidersConfig,
    task: Task,
    env: Mapping[str, str] | None = None,
    *,
    model: str | None = None,
) -> tuple[Endpoint, ...]:
    """The primary then the task's backups. A backup whose key variable is unset is left out
    (logged); an embedding backup must serve the primary's model (vectors of two models
    cannot be compared). `model`: the task's model when not the setting's (the embedding
    model chosen at start-up)."""
    env = os.environ if env is None else env
    model = task_model(settings, task) if model is None else model
    chain = [Endpoint(PRIMARY, settings.openai_base_url, settings.openai_api_key, model)]
    for backup in getattr(providers, task):
        key = env.get(backup.api_key_env, "").strip() if backup.api_key_env else NO_KEY
        if not key:
            log.warning("backup %s for %s skipped: %s is not set", backup.name, task,
                        backup.api_key_env)  # fmt: skip
            continue
        if task == "embedding" and backup.model and backup.model != model:
            log.warning("embedding backup %s skipped: model %s differs from %s", backup.name,
                        backup.model, model)  # fmt: skip
            continue
        chain.append(Endpoint(backup.name, backup.base_url, key, backup.model or model))
    return tuple(chain)
