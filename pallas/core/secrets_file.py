"""The deployment's secrets file: the model settings an operator saved in the console.

`data/secrets.toml` (under `PALLAS_DATA_DIR`, never under `config/`), written atomically with
mode 0600. It holds the model endpoint's settings (`MODEL_FIELDS`, applied while the bot runs)
and the superusers and the OneBot access token (`EDGE_FIELDS`: NoneBot reads them once, so
`bot.py` puts them into the environment before `nonebot.init()` — a restart applies them);
every other setting stays in the environment / `.env`. A non-empty environment value wins over
the file (an empty one, as `.env.example` ships them, counts as unset), so a deployment
configured by environment keeps working exactly as before. `overlay` is pure: settings + file
→ the settings in force and where each model field came from.
"""

from __future__ import annotations

import json
import logging
import os
import re
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
EDGE_FIELDS: tuple[str, ...] = ("superusers", "onebot_access_token")
# a backup endpoint's key (config/providers.toml names its variable): `key.DEEPSEEK_API_KEY`
BACKUP_KEY = re.compile(r"^key\.([A-Z][A-Z0-9_]{0,63})$")
EDGE_ENV = {"superusers": "SUPERUSERS", "onebot_access_token": "ONEBOT_ACCESS_TOKEN"}
# fields an operator may save as empty on purpose: an empty vision model turns image
# description off (a provider without a vision model), rather than meaning "unset"
MAY_BE_EMPTY = frozenset({"pallas_vision_model"})
Source = Literal["env", "file", "default"]
SOURCE_ZH: dict[Source, str] = {"env": "环境变量", "file": "控制台保存", "default": "内置默认"}


def secrets_path(data_dir: Path) -> Path:
    return data_dir / SECRETS_FILE


def read_all(data_dir: Path) -> dict[str, str]:
    """Every field the file holds ({} when there is no file; a broken file is logged and
    ignored: the environment's settings still apply)."""
    path = secrets_path(data_dir)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        log.error("%s ignored: %s", path, exc)
        return {}
    known = (*MODEL_FIELDS, *EDGE_FIELDS)
    return {
        k: v.strip()
        for k, v in data.items()
        if (k in known or BACKUP_KEY.match(k)) and isinstance(v, str)
    }


def backup_keys(data_dir: Path) -> dict[str, str]:
    """The backup endpoints' keys saved in the console, by variable name."""
    out = {}
    for key, value in read_all(data_dir).items():
        found = BACKUP_KEY.match(key)
        if found and value:
            out[found.group(1)] = value
    return out


def read_secrets(data_dir: Path) -> dict[str, str]:
    """The saved model settings."""
    return {k: v for k, v in read_all(data_dir).items() if k in MODEL_FIELDS}


def update_secrets(data_dir: Path, values: Mapping[str, str]) -> Path:
    """Replace the given fields, keep the file's others."""
    return write_secrets(data_dir, {**read_all(data_dir), **values})


def _quoted(value: str) -> str:
    # a JSON string is a TOML basic string (same escapes): a pasted newline or control
    # character cannot break the file
    return json.dumps(value)


def write_secrets(data_dir: Path, values: Mapping[str, str]) -> Path:
    """Replace the file with `values` (known fields only, empty ones left out), 0600 from the
    first byte, atomically (a reader sees the old file or the new one)."""
    path = secrets_path(data_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["# written by the Pallas console (模型页); read at start-up and on change", ""]
    extra = sorted(k for k in values if BACKUP_KEY.match(k))
    for key in (*MODEL_FIELDS, *EDGE_FIELDS, *extra):
        value = values.get(key, "").strip()
        if value or (key in MAY_BE_EMPTY and key in values):
            name = _quoted(key) if "." in key else key
            lines.append(f"{name} = {_quoted(value)}")
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


def parse_superusers(text: str) -> tuple[str, ...]:
    """QQ ids typed as `123, 456` (commas, spaces, 、 or ，); ValueError on anything else."""
    ids = tuple(p for p in re.split(r"[\s,，、]+", text.strip()) if p)
    bad = [p for p in ids if not p.isdigit() or not 5 <= len(p) <= 12]
    if bad:
        raise ValueError("QQ 号只能是 5–12 位数字：" + "、".join(bad))
    return ids


def edge_environment(
    environ: Mapping[str, str], dotenv: Mapping[str, str | None], data_dir: Path
) -> dict[str, str]:
    """What `bot.py` adds to the environment before NoneBot reads it: the saved superusers and
    OneBot token, each only when neither the environment nor `.env` sets it non-empty (an
    empty value or `[]` counts as unset)."""
    saved = read_all(data_dir)
    out: dict[str, str] = {}
    for field, name in EDGE_ENV.items():
        given = (environ.get(name) or dotenv.get(name) or "").strip()
        value = saved.get(field, "")
        if given in ("", "[]") and value:
            if field == "superusers":
                value = json.dumps(list(parse_superusers(value)))
            out[name] = value
    return out


def edge_environment_for_start(
    environ: Mapping[str, str], cwd: Path | None = None
) -> dict[str, str]:
    """`edge_environment` over the process's `.env` files as NoneBot reads them (`.env`, then
    `.env.<ENVIRONMENT>`) and its data directory."""
    from dotenv import dotenv_values

    root = cwd or Path.cwd()
    dotenv: dict[str, str | None] = dict(dotenv_values(root / ".env"))
    environment = environ.get("ENVIRONMENT") or dotenv.get("ENVIRONMENT") or "prod"
    dotenv.update(dotenv_values(root / f".env.{environment}"))
    data_dir = environ.get("PALLAS_DATA_DIR") or dotenv.get("PALLAS_DATA_DIR") or "data"
    return edge_environment(environ, dotenv, Path(data_dir))


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
    "BACKUP_KEY",
    "EDGE_ENV",
    "EDGE_FIELDS",
    "MAY_BE_EMPTY",
    "MODEL_FIELDS",
    "SECRETS_FILE",
    "SOURCE_ZH",
    "InForce",
    "Source",
    "backup_keys",
    "edge_environment",
    "edge_environment_for_start",
    "env_fields",
    "overlay",
    "parse_superusers",
    "read_all",
    "read_secrets",
    "secrets_path",
    "update_secrets",
    "write_secrets",
]
