"""The running version and the database's schema as the 状态 page and /pallas status tell."""

from __future__ import annotations

import re

from pallas.core.db.migrate import script_heads, script_revisions
from pallas.core.db.schema_state import schema_verdict
from pallas.core.version import package_version, pallas_version

HEADS = {"0003_memory", "0016_member_profile"}
KNOWN = {"0001_init", "0003_memory", "0016_member_profile"}


def test_the_version_is_real_not_a_static_string() -> None:
    version = pallas_version()
    assert version.startswith(package_version())
    assert re.match(r"^\d+\.\d+\.\d+(\+[0-9a-z.-]+( \(\d{4}-\d\d-\d\d\))?)?$", version), version


def test_a_database_at_the_heads_is_fine() -> None:
    state = schema_verdict(HEADS, HEADS, KNOWN)
    assert state.ok and "0016_member_profile" in state.line_zh and "与本版本一致" in state.line_zh


def test_a_database_a_newer_release_migrated_is_named_with_what_to_do() -> None:
    state = schema_verdict({"0003_memory", "0017_from_the_future"}, HEADS, KNOWN)
    assert (
        not state.ok and "更新的版本" in state.line_zh and "0017_from_the_future" in state.line_zh
    )
    assert "pallas restore" in state.action_zh and "升级" in state.action_zh


def test_a_database_behind_says_restart() -> None:
    state = schema_verdict({"0001_init", "0003_memory"}, HEADS, KNOWN)
    assert not state.ok and "0016_member_profile" in state.line_zh and "重启" in state.action_zh


def test_the_shipped_heads_are_known_revisions() -> None:
    heads = script_heads()
    assert heads and heads <= script_revisions()
