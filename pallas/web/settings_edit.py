"""Edits of `config/groups/default.toml`, the layer under every group's own file.

The same checks as a group file (`config_edit.validate_merged`: the model, the pipeline, the
persona), and one more: every group file must still validate merged over the new default — a
default that breaks a group is refused, naming the group. A good change replaces the file
atomically; the store's hot reload applies it to every group on its next message.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import tomlkit

from pallas.config import GroupConfig
from pallas.web.config_edit import (
    ConfigRejected,
    as_validated,
    drop_key,
    key_path,
    parse_file,
    parse_value,
    put_value,
    validate_merged,
    write_atomic,
)

DEFAULT_FILE = "default.toml"


def default_path(groups_dir: Path) -> Path:
    return groups_dir / DEFAULT_FILE


def read_default(groups_dir: Path) -> str:
    path = default_path(groups_dir)
    return path.read_text(encoding="utf-8") if path.exists() else ""


def validate_default(groups_dir: Path, text: str) -> GroupConfig:
    """The config a group without a file of its own would get, or `ConfigRejected`."""
    data = parse_file(DEFAULT_FILE, text)
    config = validate_merged(groups_dir, DEFAULT_FILE, {}, data)
    for path in sorted(groups_dir.glob("*.toml")):
        if path.name == DEFAULT_FILE:
            continue
        try:
            group = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError:
            continue  # already broken: the store keeps that group's last good version
        try:
            validate_merged(groups_dir, path.name, data, group)
        except ConfigRejected as exc:
            raise ConfigRejected(
                f"{DEFAULT_FILE}：这样改会让 {path.name} 通不过校验：{exc}"
            ) from exc
    return config


def save_default(groups_dir: Path, text: str) -> GroupConfig:
    config = validate_default(groups_dir, text)
    write_atomic(default_path(groups_dir), text)
    return config


def set_default_value(groups_dir: Path, dotted: str, literal: str) -> GroupConfig:
    """Set one key in default.toml (comments kept); a quoted number the model reads as a
    number is written as one, as for a group file."""
    if not dotted.strip():
        raise ConfigRejected("empty key")
    parts = key_path(dotted)
    value: Any = parse_value(literal)
    doc = tomlkit.parse(read_default(groups_dir))
    put_value(doc, parts, value)
    config = validate_default(groups_dir, tomlkit.dumps(doc))
    typed = as_validated(config, parts, value)
    if typed is not value:
        put_value(doc, parts, typed)
    return save_default(groups_dir, tomlkit.dumps(doc))


def reset_default_value(groups_dir: Path, dotted: str) -> GroupConfig:
    """Drop one key from default.toml: the built-in value applies again."""
    doc = tomlkit.parse(read_default(groups_dir))
    drop_key(doc, dotted, f"{DEFAULT_FILE} 里没有 {dotted}")
    return save_default(groups_dir, tomlkit.dumps(doc))
