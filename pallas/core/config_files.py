"""Admin-owned TOML config files: validated, merged over defaults, hot-reloaded.

`GroupConfigStore` reads `groups/default.toml` and `groups/<group_id>.toml`, deep-merges them
over the model's embedded defaults and validates the result. Files are re-checked (by mtime and
size) at most once per `check_interval` seconds, so an edit takes effect on the next message
without a restart. A broken file is reported once per change with file and field, and the last
good version of that file stays in force.

Process-wide keys: a field marked `Field(..., json_schema_extra=DEFAULT_ONLY)` drives a job that
runs once per process (a sweep interval, a batch size per run), so it is read from the default
level only (`groups/default.toml` over the model default). A group file that sets one is
rejected like any invalid file, with a message naming the key and saying where it belongs.
"""

from __future__ import annotations

import logging
import time
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar, get_args

from pydantic import BaseModel, ValidationError

from pallas.core.errors import ConfigError

log = logging.getLogger("pallas.config")

ModelT = TypeVar("ModelT", bound=BaseModel)

# `Field(..., json_schema_extra=DEFAULT_ONLY)`: a process-wide key, read from default.toml only
DEFAULT_ONLY: dict[str, Any] = {"default_only": True}


class DefaultOnlyKeyError(ConfigError):
    """A group file sets a process-wide key (one that only the default level can set)."""


def _sub_models(annotation: object) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in get_args(annotation) for m in _sub_models(arg)]


def default_only_keys(model: type[BaseModel], prefix: str = "") -> list[str]:
    """Every dotted key of `model` (nested section models included) marked `DEFAULT_ONLY`."""
    keys: list[str] = []
    for name, info in model.model_fields.items():
        extra = info.json_schema_extra
        if isinstance(extra, dict) and extra.get("default_only"):
            keys.append(prefix + name)
        for sub in _sub_models(info.annotation):
            keys += default_only_keys(sub, f"{prefix}{name}.")
    return keys


def default_only_keys_set(model: type[BaseModel], data: Mapping[str, Any]) -> list[str]:
    """The process-wide keys that a group file's `data` sets."""
    found = []
    for key in default_only_keys(model):
        node: Any = data
        for part in key.split("."):
            node = node.get(part, _MISSING) if isinstance(node, Mapping) else _MISSING
        if node is not _MISSING:
            found.append(key)
    return found


def reject_default_only(model: type[BaseModel], path: Path, data: Mapping[str, Any]) -> None:
    """Raise `DefaultOnlyKeyError` when the group file at `path` sets a process-wide key."""
    found = default_only_keys_set(model, data)
    if found:
        raise DefaultOnlyKeyError(
            f"{path}: {', '.join(found)}: process-wide setting, read from default.toml only "
            "(it drives a job that runs once for every group, or the private chats, which have "
            "no group file); set it in default.toml and remove it from this group file"
        )


_MISSING = object()


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
        except DefaultOnlyKeyError as exc:
            message = str(exc)
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


_PATHS_KEPT = 65_536


class GroupConfigStore(Generic[ModelT]):
    """Per-group config: model defaults ← groups/default.toml ← groups/<group_id>.toml."""

    def __init__(self, model: type[ModelT], groups_dir: Path, *, check_interval: float = 1.0):
        self._model = model
        self._dir = groups_dir
        self._files = TomlFileCache(check_interval=check_interval, validate=self._validate_file)
        self._cache: dict[int, tuple[int, ModelT]] = {}
        self._shared: tuple[int, ModelT] | None = None  # groups without a file of their own
        # group id → the path of its file: asked on every message, a new Path costs ~5 µs
        self._paths: dict[int, Path] = {}
        self._default_path = groups_dir / "default.toml"

    def _validate_file(self, path: Path, data: dict[str, Any]) -> None:
        # Validate each file merged over the defaults file so an error names *this* file.
        is_default = path.name == "default.toml"
        if not is_default:
            reject_default_only(self._model, path, data)
        base = {} if is_default else self._files.read(self._dir / "default.toml")
        self._model.model_validate(deep_merge(base, data))

    def get(self, group_id: int) -> ModelT:
        default = self._files.read(self._default_path)
        specific = self._files.read(self._path(group_id)) if group_id else {}
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

    def _path(self, group_id: int) -> Path:
        path = self._paths.get(group_id)
        if path is None:
            if len(self._paths) >= _PATHS_KEPT:
                self._paths.clear()
            path = self._paths[group_id] = self._dir / f"{group_id}.toml"
        return path

    def errors(self) -> dict[str, str]:
        """Current problems per file, for admin commands."""
        result = {}
        for path in sorted(self._dir.glob("*.toml")):
            self._files.read(path)
            if (message := self._files.error(path)) is not None:
                result[path.name] = message
        return result
