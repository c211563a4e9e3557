"""Process-wide keys (a job that runs once for every group) are set in default.toml only.

The rule: a group config field that a process-wide job reads from the default level (the group
insight sweep, the sticker describe job) is marked `DEFAULT_ONLY`; a group file setting it is
rejected with a message naming the key and where it belongs — by the config store (the last
good version stays in force) and by the web console's editor.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pallas.config import GroupConfig
from pallas.core.config_files import GroupConfigStore, default_only_keys
from pallas.web.config_edit import ConfigRejected, validate_text

PROCESS_WIDE = {
    "learning.sweep_interval_seconds": 900,  # the sweep's schedule (packages/group_insight)
    "learning.max_jobs_per_sweep": 3,  # one sweep's job cap over all groups
    "stickers.describe_interval_s": 120,  # the describe job's schedule (packages/stickers)
    "stickers.describe_per_run": 2,  # stickers one run describes over all groups
}


def _toml(key: str, value: int) -> str:
    section, name = key.split(".")
    return f"[{section}]\n{name} = {value}\n"


def _value(config: GroupConfig, key: str) -> int:
    section, name = key.split(".")
    return getattr(getattr(config, section), name)


def test_the_process_wide_keys_are_exactly_the_marked_fields():
    # `[private]` as a whole: a private chat has no group file, its policy is the defaults'
    # `[[voice.providers]]`: TTS URLs and key variables are the deployment's, not a group's
    assert set(default_only_keys(GroupConfig)) == {*PROCESS_WIDE, "private", "voice.providers"}


VOICE_PROVIDER = '[[voice.providers]]\nname = "edge"\nkind = "edge_tts"\n'


def test_voice_providers_are_set_in_default_toml_and_rejected_in_a_group_file(
    tmp_path: Path,
) -> None:
    (tmp_path / "default.toml").write_text(VOICE_PROVIDER, encoding="utf-8")
    (tmp_path / "123.toml").write_text("[voice]\nenabled = true\n" + VOICE_PROVIDER, "utf-8")
    store = GroupConfigStore(GroupConfig, tmp_path)
    assert [p.name for p in store.get(0).voice.providers] == ["edge"]
    assert store.get(123).voice.enabled is False  # the group file is rejected whole
    assert [p.name for p in store.get(123).voice.providers] == ["edge"]
    problem = store.errors()["123.toml"]
    assert "voice.providers" in problem and "default.toml" in problem


def test_private_is_set_in_default_toml_and_rejected_in_a_group_file(tmp_path: Path):
    (tmp_path / "default.toml").write_text("[private]\nstrangers = true\n", encoding="utf-8")
    (tmp_path / "123.toml").write_text("[private]\nfriends = false\n", encoding="utf-8")
    store = GroupConfigStore(GroupConfig, tmp_path)
    assert store.get(0).private.strangers is True
    assert store.get(123).private.friends is True  # the group file is rejected whole
    problem = store.errors()["123.toml"]
    assert "private" in problem and "default.toml" in problem


@pytest.mark.parametrize(("key", "value"), PROCESS_WIDE.items())
def test_default_toml_sets_a_process_wide_key_for_every_group(tmp_path: Path, key, value):
    (tmp_path / "default.toml").write_text(_toml(key, value), encoding="utf-8")
    store = GroupConfigStore(GroupConfig, tmp_path)
    assert _value(store.get(0), key) == value
    assert _value(store.get(123), key) == value
    assert store.errors() == {}


@pytest.mark.parametrize(("key", "value"), PROCESS_WIDE.items())
def test_a_group_file_setting_a_process_wide_key_is_rejected_by_name(tmp_path: Path, key, value):
    (tmp_path / "123.toml").write_text(
        "[chat]\nallow_sticker = true\n" + _toml(key, value), encoding="utf-8"
    )
    store = GroupConfigStore(GroupConfig, tmp_path)
    config = store.get(123)
    assert _value(config, key) == _value(GroupConfig(), key)  # the built-in value stays
    assert config.chat.allow_sticker is False  # the whole file is rejected, as for any error
    problem = store.errors()["123.toml"]
    assert key in problem and "default.toml" in problem


def test_the_console_editor_rejects_it_in_a_group_file(tmp_path: Path):
    (tmp_path / "default.toml").write_text(_toml("stickers.describe_per_run", 2), "utf-8")
    with pytest.raises(ConfigRejected, match=r"stickers\.describe_per_run.*default\.toml"):
        validate_text(tmp_path, 123, _toml("stickers.describe_per_run", 5))
    assert validate_text(tmp_path, 123, "").stickers.describe_per_run == 2  # from default.toml
