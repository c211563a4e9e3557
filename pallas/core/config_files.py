"""Admin-owned TOML config files: validated, merged over defaults, hot-reloaded.

`GroupConfigStore` reads `groups/default.toml` and `groups/<group_id>.toml`, deep-merges them
over the model's embedded defaults and validates the result. Files are re-checked (by mtime and
size) at most once per `check_interval` seconds, so an edit takes effect on the next message
without a restart. A broken file is reported once per change with file and field, and the last
good version of that file stays in force.
"""

from __future__ import annotations

import logging
import time
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

log = logging.getLogger("pallas.config")

ModelT = TypeVar("ModelT", bound=BaseModel)


def deep_merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """Tables merge key by key; any other value (lists included) replaces the base value."""
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def describe_validation_error(path: Path, error: ValidationError) -> str:
    parts = []
    for item in error.errors():
        field = ".".join(str(p) for p in item.get("loc", ())) or "<root>"
        parts.append(f"{field}: {item.get('msg')}")
    return f"{path}: " + "; ".join(parts)


@dataclass(slots=True)
class _FileState:
    signature: tuple[float, int] | None  # (mtime, size); None = file absent
    data: dict[str, Any]  # last good parsed content ({} when absent)
    error: str | None = None


class TomlFileCache:
    """Parsed TOML files keyed by path; keeps the last good content when a file breaks."""

    def __init__(
        self,
        *,
        check_interval: float = 1.0,
        validate: Callable[[Path, dict[str, Any]], None] | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._files: dict[Path, _FileState] = {}
        self._checked_at: dict[Path, float] = {}
        self._check_interval = check_interval
        self._validate = validate
        self._monotonic = monotonic
        self.generation = 0  # bumps whenever any file's effective content changes

    def read(self, path: Path) -> dict[str, Any]:
        now = self._monotonic()
        state = self._files.get(path)
        if state is not None and now - self._checked_at.get(path, -1e9) < self._check_interval:
            return state.data
        self._checked_at[path] = now
        signature = _signature(path)
        if state is not None and state.signature == signature:
            return state.data
        self._files[path] = self._load(path, signature, state)
        return self._files[path].data

    def error(self, path: Path) -> str | None:
        state = self._files.get(path)
        return state.error if state else None

    def _load(
        self, path: Path, signature: tuple[float, int] | None, old: _FileState | None
    ) -> _FileState:
        last_good = old.data if old else {}
        if signature is None:
            if old is not None and old.signature is not None:
                log.info("config file removed: %s", path)
            self.generation += old is not None and bool(old.data)
            return _FileState(None, {})
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
            if self._validate is not None:
                self._validate(path, data)
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            message = f"{path}: cannot parse: {exc}"
        except ValidationError as exc:
            message = describe_validation_error(path, exc)
        else:
            if old is not None:
                log.info("config file reloaded: %s", path)
            self.generation += 1
            return _FileState(signature, data)
        log.error("config rejected, keeping the last good version — %s", message)
        return _FileState(signature, last_good, message)


def _signature(path: Path) -> tuple[float, int] | None:
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    return (stat.st_mtime, stat.st_size)


class GroupConfigStore(Generic[ModelT]):
    """Per-group config: model defaults ← groups/default.toml ← groups/<group_id>.toml."""

    def __init__(self, model: type[ModelT], groups_dir: Path, *, check_interval: float = 1.0):
        self._model = model
        self._dir = groups_dir
        self._files = TomlFileCache(check_interval=check_interval, validate=self._validate_file)
        self._cache: dict[int, tuple[int, ModelT]] = {}
        self._shared: tuple[int, ModelT] | None = None  # groups without a file of their own

    def _validate_file(self, path: Path, data: dict[str, Any]) -> None:
        # Validate each file merged over the defaults file so an error names *this* file.
        base = {} if path.name == "default.toml" else self._files.read(self._dir / "default.toml")
        self._model.model_validate(deep_merge(base, data))

    def get(self, group_id: int) -> ModelT:
        default = self._files.read(self._dir / "default.toml")
        specific = self._files.read(self._dir / f"{group_id}.toml") if group_id else {}
        cached = self._cache.get(group_id)
        if cached is not None and cached[0] == self._files.generation:
            return cached[1]
        if not specific:  # one shared instance for every group on the defaults (RSS)
            shared = self._shared
            if shared is None or shared[0] != self._files.generation:
                config = self._model.model_validate(default)
                shared = self._shared = (self._files.generation, config)
            self._cache.pop(group_id, None)
            return shared[1]
        try:
            config = self._model.model_validate(deep_merge(default, specific))
        except ValidationError as exc:
            # Each file validated alone, but not together: fall back to the previous merge.
            log.error("%s", describe_validation_error(self._dir / f"{group_id}.toml", exc))
            if cached is not None:
                return cached[1]
            config = self._model.model_validate(default)
        self._cache[group_id] = (self._files.generation, config)
        return config

    def errors(self) -> dict[str, str]:
        """Current problems per file, for admin commands."""
        result = {}
        for path in sorted(self._dir.glob("*.toml")):
            self._files.read(path)
            if (message := self._files.error(path)) is not None:
                result[path.name] = message
        return result
