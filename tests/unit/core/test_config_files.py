import logging
import os
from pathlib import Path

import pytest

from pallas.config import GroupConfig
from pallas.core.config_files import GroupConfigStore, deep_merge


def _write(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    # make the change visible to the mtime check even within the same clock tick
    stat = path.stat()
    os.utime(path, (stat.st_atime, stat.st_mtime + 1))


@pytest.fixture
def groups(tmp_path: Path) -> Path:
    d = tmp_path / "groups"
    d.mkdir()
    _write(d / "default.toml", 'persona = "pallas"\nadmins = [1]\n')
    return d


def test_group_file_overrides_defaults(groups: Path) -> None:
    _write(groups / "42.toml", "enabled = false\nadmins = [7]\n")
    store = GroupConfigStore(GroupConfig, groups, check_interval=0)
    assert store.get(42).enabled is False and store.get(42).admins == [7]
    assert store.get(43).enabled is True and store.get(43).admins == [1]


def test_edit_is_picked_up_without_restart(groups: Path) -> None:
    store = GroupConfigStore(GroupConfig, groups, check_interval=0)
    assert store.get(42).enabled is True
    _write(groups / "42.toml", "enabled = false\n")
    assert store.get(42).enabled is False
    (groups / "42.toml").unlink()
    assert store.get(42).enabled is True


@pytest.mark.parametrize(
    ("broken", "needle"),
    [
        ("enabled = \n", "cannot parse"),
        ('enabled = "sometimes"\n', "enabled"),
        ("enabeld = true\n", "enabeld"),
    ],
)
def test_broken_file_keeps_last_good_and_names_file_and_field(
    groups: Path, broken: str, needle: str, caplog: pytest.LogCaptureFixture
) -> None:
    store = GroupConfigStore(GroupConfig, groups, check_interval=0)
    _write(groups / "42.toml", "enabled = false\n")
    assert store.get(42).enabled is False
    caplog.set_level(logging.ERROR, logger="pallas.config")
    _write(groups / "42.toml", broken)
    assert store.get(42).enabled is False  # last good version still in force
    assert "42.toml" in caplog.text and needle in caplog.text
    assert "42.toml" in store.errors()


def test_deep_merge_tables_merge_lists_replace() -> None:
    merged = deep_merge({"a": {"x": 1, "y": [1]}, "b": 1}, {"a": {"y": [2]}, "c": 3})
    assert merged == {"a": {"x": 1, "y": [2]}, "b": 1, "c": 3}
