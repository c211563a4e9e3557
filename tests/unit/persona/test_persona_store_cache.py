"""PersonaStore validates a pack once per file content and still follows edits."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pydantic import ValidationError

from pallas.features.persona.pack import PersonaStore


def _write(path: Path, name: str, mtime: float) -> None:
    path.write_text(f'name = "{name}"\n', encoding="utf-8")
    os.utime(path, (mtime, mtime))


def test_the_same_pack_is_returned_until_the_file_changes(tmp_path: Path) -> None:
    _write(tmp_path / "p.toml", "帕拉斯", 1_000_000)
    store = PersonaStore(tmp_path, check_interval=0)
    first = store.get("p")
    assert first.name == "帕拉斯"
    assert store.get("p") is first  # no re-validation per message

    _write(tmp_path / "p.toml", "牛牛", 1_000_100)
    edited = store.get("p")
    assert edited.name == "牛牛" and edited is not first


def test_a_missing_persona_gets_the_shared_defaults(tmp_path: Path) -> None:
    store = PersonaStore(tmp_path, check_interval=0)
    assert store.get("nobody") is store.get("nobody")


def test_a_shared_pack_cannot_be_changed_by_one_caller(tmp_path: Path) -> None:
    _write(tmp_path / "p.toml", "帕拉斯", 1_000_000)
    pack = PersonaStore(tmp_path, check_interval=0).get("p")
    with pytest.raises(ValidationError):
        pack.name = "别的名字"  # type: ignore[misc]
