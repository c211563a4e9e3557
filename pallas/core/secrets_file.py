"""The deployment's secrets file: the model settings an operator saved in the console.

`data/secrets.toml` (under `PALLAS_DATA_DIR`, never under `config/`), written atomically with
mode 0600. It holds only the model endpoint's settings (`MODEL_FIELDS`); every other setting
stays in the environment / `.env`. A non-empty environment value wins over the file (an empty
one, as `.env.example` ships them, counts as unset), so a deployment configured by environment
keeps working exactly as before. `overlay` is pure: settings + file → the settings in force and
where each model field came from.
"""

from __future__ import annotations

import logging
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pallas.core.settings import PallasSettings

log = logging.getLogger("pallas")

SECRETS_FILE = "secrets.toml"
MODEL_FIELDS: tuple[str, ...] = (
    "openai_base_url",
    "openai_api_key",
    "pallas_chat_model",
    "pallas_cheap_model",
    "pallas_vision_model",
    "pallas_embedding_model",
)
# fields an operator may save as empty on purpose: an empty vision model turns image
# description off (a provider without a vision model), rather than meaning "unset"
MAY_BE_EMPTY = frozenset({"pallas_vision_model"})
Source = Literal["env", "file", "default"]
SOURCE_ZH: dict[Source, str] = {"env": "环境变量", "file": "控制台保存", "default": "内置默认"}


def secrets_path(data_dir: Path) -> Path:
    return data_dir / SECRETS_FILE


def read_secrets(data_dir: Path) -> dict[str, str]:
    """The saved model settings ({} when there is no file; a broken file is logged and
    ignored: the environment's settings still apply)."""
    path = secrets_path(data_dir)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        log.error("%s ignored: %s", path, exc)
        return {}
    return {k: v.strip() for k, v in data.items() if k in MODEL_FIELDS and isinstance(v, str)}


def _quoted(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def write_secrets(data_dir: Path, values: Mapping[str, str]) -> Path:
    """Replace the file with `values` (model fields only, empty ones left out), 0600 from the
    first byte, atomically (a reader sees the old file or the new one)."""
    path = secrets_path(data_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["# written by the Pallas console (模型页); read at start-up and on change", ""]
    for key in MODEL_FIELDS:
        value = values.get(key, "").strip()
        if value or (key in MAY_BE_EMPTY and key in values):
            lines.append(f"{key} = {_quoted(value)}")
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write("\n".join(lines) + "\n")
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def env_fields(settings: PallasSettings) -> frozenset[str]:
    """The model fields the environment (or `.env`) sets to a non-empty value."""
    return frozenset(
        name
        for name in MODEL_FIELDS
        if name in settings.model_fields_set and str(getattr(settings, name)).strip()
    )


@dataclass(frozen=True, slots=True)
class InForce:
    """The settings in force and where each model field's value comes from."""

    settings: PallasSettings
    sources: Mapping[str, Source]


def overlay(settings: PallasSettings, saved: Mapping[str, str]) -> InForce:
    """`settings` (from the environment) with the saved values for the fields the environment
    leaves unset."""
    from_env = env_fields(settings)
    update = {
        k: v
        for k, v in saved.items()
        if k in MODEL_FIELDS and (v or k in MAY_BE_EMPTY) and k not in from_env
    }
    for name in MODEL_FIELDS:  # an empty variable is unset: the built-in default applies
        default = PallasSettings.model_fields[name].default
        unset = name not in from_env and name not in update and not getattr(settings, name)
        if unset and isinstance(default, str) and default:
            update[name] = default
    sources: dict[str, Source] = {}
    for name in MODEL_FIELDS:
        from_file = name in saved and name in update and update[name] == saved[name]
        sources[name] = "env" if name in from_env else "file" if from_file else "default"
    merged = settings
    if update:  # validated like the environment's values (the key is stripped)
        merged = PallasSettings.model_validate({**settings.model_dump(), **update})
    return InForce(merged, sources)


__all__ = [
    "MAY_BE_EMPTY",
    "MODEL_FIELDS",
    "SECRETS_FILE",
    "SOURCE_ZH",
    "InForce",
    "Source",
    "env_fields",
    "overlay",
    "read_secrets",
    "secrets_path",
    "write_secrets",
]
