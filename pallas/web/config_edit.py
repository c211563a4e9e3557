"""Console edits of `config/groups/<gid>.toml`: tomlkit (comments kept), validated, atomic.

Every change is checked by the same model and merge as the file loader (`GroupConfigStore`):
the new file merged over `default.toml` must validate as `GroupConfig`, and pipeline keys must
name real processors (core ones cannot be disabled). A rejected change writes nothing. A good
one replaces the file atomically; the store's hot reload picks it up on the next message.
"""

from __future__ import annotations

import os
import tempfile
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomlkit
from pydantic import ValidationError
from tomlkit.items import Table

from pallas.config import GroupConfig
from pallas.core.config_files import (
    DefaultOnlyKeyError,
    deep_merge,
    describe_validation_error,
    reject_default_only,
)
from pallas.core.errors import ConfigError
from pallas.turn import build_chat_pipeline
from pallas.web.config_docs import quote_part


class ConfigRejected(ConfigError):
    """The change does not validate; nothing was written."""


PRIVATE_HAS_NO_FILE = "私聊没有单独的配置文件：私聊的设置在默认配置（设置页）的 [private] 表里"


@dataclass(frozen=True, slots=True)
class Origin:
    key: str
    value: Any
    origin: str  # "built-in" | "default.toml" | "<gid>.toml"


def group_path(groups_dir: Path, group_id: int) -> Path:
    return groups_dir / f"{int(group_id)}.toml"


def read_text(groups_dir: Path, group_id: int) -> str:
    path = group_path(groups_dir, group_id)
    return path.read_text(encoding="utf-8") if path.exists() else ""


def _load_default(groups_dir: Path) -> dict[str, Any]:
    path = groups_dir / "default.toml"
    return tomllib.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def validate_text(groups_dir: Path, group_id: int, text: str) -> GroupConfig:
    """The merged config this file text would give, or `ConfigRejected` with the reason."""
    if not group_id:  # group 0 is every private chat; a 0.toml would be a hidden second place
        raise ConfigRejected(PRIVATE_HAS_NO_FILE)
    path = group_path(groups_dir, group_id)
    data = parse_file(path.name, text)
    try:
        reject_default_only(GroupConfig, Path(path.name), data)  # they belong in default.toml
    except DefaultOnlyKeyError as exc:
        raise ConfigRejected(str(exc)) from exc
    return validate_merged(groups_dir, path.name, _load_default(groups_dir), data)


def parse_file(file_name: str, text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigRejected(f"{file_name}: cannot parse: {exc}") from exc


def validate_merged(
    groups_dir: Path, file_name: str, default: Mapping[str, Any], data: Mapping[str, Any]
) -> GroupConfig:
    """`data` merged over `default` as the store does it: the model, the pipeline and the
    persona must all hold (`file_name` names the file in the reason)."""
    try:
        config = GroupConfig.model_validate(deep_merge(default, data))
    except ValidationError as exc:
        raise ConfigRejected(describe_validation_error(Path(file_name), exc)) from exc
    warnings = build_chat_pipeline(config.context).warnings
    if warnings:
        raise ConfigRejected(f"{file_name}: context: " + "; ".join(warnings))
    _check_persona(groups_dir, file_name, data)
    return config


def _check_persona(groups_dir: Path, file_name: str, data: Mapping[str, Any]) -> None:
    """A persona the group names must be installed: the bot would fall back to built-in
    defaults without a word otherwise."""
    name = data.get("persona")
    if not isinstance(name, str):
        return
    personas = groups_dir.parent / "personas"
    if (personas / f"{Path(name).name}.toml").is_file():
        return
    installed = sorted(p.stem for p in personas.glob("*.toml")) if personas.is_dir() else []
    listed = "、".join(installed) if installed else "（没有）"
    raise ConfigRejected(f"{file_name}: 人设「{name}」不存在；已安装的人设：{listed}")


def save_text(groups_dir: Path, group_id: int, text: str) -> GroupConfig:
    """Validate, then replace the file atomically."""
    config = validate_text(groups_dir, group_id, text)
    write_atomic(group_path(groups_dir, group_id), text)
    return config


def write_atomic(path: Path, text: str | bytes) -> None:
    """Replace `path` with `text` in one step: a reader sees the old file or the new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8") if isinstance(text, str) else text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def edit_document(
    groups_dir: Path, group_id: int, change: Callable[[tomlkit.TOMLDocument], None]
) -> GroupConfig:
    """Apply `change` to the parsed group file (comments preserved) and save it validated."""
    doc = tomlkit.parse(read_text(groups_dir, group_id))
    change(doc)
    return save_text(groups_dir, group_id, tomlkit.dumps(doc))


def _table(doc: tomlkit.TOMLDocument | Table, name: str) -> Table:
    if name not in doc:
        doc[name] = tomlkit.table()
    table = doc[name]
    if not isinstance(table, Table):
        raise ConfigRejected(f"{name} is not a table")
    return table


def set_pipeline(
    groups_dir: Path, group_id: int, *, order: Sequence[str] | None, disabled: Sequence[str] | None
) -> GroupConfig:
    """Write `[context] processor_order` / `disabled_processors` (None: leave as is)."""

    def change(doc: tomlkit.TOMLDocument) -> None:
        context = _table(doc, "context")
        if order is not None:
            context["processor_order"] = list(order)
        if disabled is not None:
            context["disabled_processors"] = sorted(disabled)

    return edit_document(groups_dir, group_id, change)


def reset_pipeline(groups_dir: Path, group_id: int) -> GroupConfig:
    """Drop the group's pipeline keys: default.toml / built-in order and switches apply."""

    def change(doc: tomlkit.TOMLDocument) -> None:
        context = doc.get("context")
        if isinstance(context, Table):
            for key in ("processor_order", "disabled_processors"):
                if key in context:
                    del context[key]

    return edit_document(groups_dir, group_id, change)


def parse_value(literal: str) -> Any:
    """A TOML value written as in a file (`12`, `true`, `"text"`, `[1, 2]`)."""
    try:
        return tomllib.loads(f"v = {literal}")["v"]
    except tomllib.TOMLDecodeError as exc:
        raise ConfigRejected(f"not a TOML value: {literal!r} ({exc})") from exc


def key_path(dotted: str) -> list[str]:
    """The parts of a TOML dotted key, quoted parts unquoted: `models."gpt-4o-mini".input_price`
    → ["models", "gpt-4o-mini", "input_price"] (split by TOML's own rules, not on every dot)."""
    try:
        node: Any = tomllib.loads(f"{dotted.strip()} = 0")
    except tomllib.TOMLDecodeError as exc:
        raise ConfigRejected(f"不是合法的配置键：{dotted!r}") from exc
    parts: list[str] = []
    while isinstance(node, dict):
        ((key, node),) = node.items()
        parts.append(key)
    return parts


def set_value(groups_dir: Path, group_id: int, dotted: str, literal: str) -> GroupConfig:
    """Set one key (`context.char_budget`) in the group file; tables are created as needed.

    A quoted number or boolean ("0.2") that the config field reads as a number is written as
    one: the file keeps the field's TOML type, not the string the form happened to send."""
    if not dotted.strip():
        raise ConfigRejected("empty key")
    parts = key_path(dotted)
    value = parse_value(literal)
    doc = tomlkit.parse(read_text(groups_dir, group_id))
    put_value(doc, parts, value)
    config = validate_text(groups_dir, group_id, tomlkit.dumps(doc))
    typed = as_validated(config, parts, value)
    if typed is not value:
        put_value(doc, parts, typed)
    return save_text(groups_dir, group_id, tomlkit.dumps(doc))


def reset_value(groups_dir: Path, group_id: int, dotted: str) -> GroupConfig:
    """Drop one key from the group file: default.toml's (or the built-in) value applies again.
    Tables the key leaves empty are dropped too."""
    doc = tomlkit.parse(read_text(groups_dir, group_id))
    drop_key(doc, dotted, f"本群配置文件里没有 {dotted}")
    return save_text(groups_dir, group_id, tomlkit.dumps(doc))


def drop_key(doc: tomlkit.TOMLDocument, dotted: str, missing: str) -> None:
    """Delete one dotted key and the tables it leaves empty (`ConfigRejected(missing)` when
    the file does not set it)."""
    parts = key_path(dotted)
    tables: list[Any] = [doc]
    for part in parts[:-1]:
        node = tables[-1].get(part)
        if not isinstance(node, Mapping):
            raise ConfigRejected(missing)
        tables.append(node)
    if parts[-1] not in tables[-1]:
        raise ConfigRejected(missing)
    del tables[-1][parts[-1]]
    for depth in range(len(parts) - 1, 0, -1):  # innermost first
        if not tables[depth]:
            del tables[depth - 1][parts[depth - 1]]


def put_value(doc: tomlkit.TOMLDocument, parts: Sequence[str], value: Any) -> None:
    node: Any = doc
    for part in parts[:-1]:
        node = _table(node, part)
    node[parts[-1]] = value


def as_validated(config: GroupConfig, parts: Sequence[str], value: Any) -> Any:
    """`value`, or the number / boolean the model made of it when it was a string."""
    if not isinstance(value, str):
        return value
    node: Any = config.model_dump()
    for part in parts:
        if not isinstance(node, Mapping) or part not in node:
            return value
        node = node[part]
    return node if isinstance(node, bool | int | float) else value


def _flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{quote_part(key)}"  # `models."gpt-4.1".input_price` splits right
        if isinstance(value, Mapping) and value:
            out.update(_flatten(value, name + "."))
        else:
            out[name] = value
    return out


def _origin(key: str, layers: Sequence[tuple[str, dict[str, Any]]]) -> str:
    for label, flat in layers:
        if key in flat or any(key.startswith(k + ".") for k in flat):
            return label
    return "built-in"


def merged_with_origin(groups_dir: Path, group_id: int, merged: GroupConfig) -> list[Origin]:
    """Each leaf of the merged config with the layer it came from (group file wins)."""
    group_file = group_path(groups_dir, group_id)
    group_data = tomllib.loads(read_text(groups_dir, group_id) or "")
    return with_origin(
        merged, [(group_file.name, group_data), ("default.toml", _load_default(groups_dir))]
    )


def with_origin(
    merged: GroupConfig, layers: Sequence[tuple[str, Mapping[str, Any]]]
) -> list[Origin]:
    """Each leaf of `merged` with the first of `layers` (name, file data) that sets it."""
    flat_layers = [(label, _flatten(data)) for label, data in layers]
    flat = _flatten(merged.model_dump(mode="json"))
    return [Origin(k, v, _origin(k, flat_layers)) for k, v in sorted(flat.items())]
