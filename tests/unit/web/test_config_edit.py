"""Console edits of group TOML files: comments kept, validated first, rejected changes write
nothing, and each merged value's origin."""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

import pytest

from pallas.config import GroupConfig
from pallas.core.config_files import GroupConfigStore
from pallas.web import config_edit
from pallas.web.config_edit import ConfigRejected

REPO = Path(__file__).resolve().parents[3]
GID = 4242
ORIGINAL = """# my group: keep this comment
persona = "pallas"   # inline comment too

[context]
# budget tuned by hand
char_budget = 9000
"""


@pytest.fixture
def groups(tmp_path: Path) -> Path:
    shutil.copytree(REPO / "config" / "groups", tmp_path / "groups")
    shutil.copytree(REPO / "config" / "personas", tmp_path / "personas")
    (tmp_path / "groups" / f"{GID}.toml").write_text(ORIGINAL, encoding="utf-8")
    return tmp_path / "groups"


def text(groups: Path) -> str:
    return (groups / f"{GID}.toml").read_text(encoding="utf-8")


def test_pipeline_change_keeps_comments_and_loads_like_the_store(groups: Path) -> None:
    config_edit.set_pipeline(
        groups, GID, order=["prompt_overrides", "guard"], disabled=["current_time"]
    )
    saved = text(groups)
    assert "# my group: keep this comment" in saved and "# inline comment too" in saved
    assert "# budget tuned by hand" in saved and "char_budget = 9000" in saved
    loaded = GroupConfigStore(GroupConfig, groups).get(GID)
    assert loaded.context.processor_order == ["prompt_overrides", "guard"]
    assert loaded.context.disabled_processors == ["current_time"]
    config_edit.reset_pipeline(groups, GID)
    assert "processor_order" not in text(groups) and "# budget tuned by hand" in text(groups)


@pytest.mark.parametrize(
    ("order", "disabled", "problem"),
    [
        (None, ["guard"], "cannot be disabled"),  # core processor
        (None, ["no_such_processor"], "unknown processor"),
        (["budget", "guard"], None, "fixed"),  # budget keeps its slot
    ],
)
def test_rejected_pipeline_change_writes_nothing(
    groups: Path, order: list[str] | None, disabled: list[str] | None, problem: str
) -> None:
    with pytest.raises(ConfigRejected, match=problem):
        config_edit.set_pipeline(groups, GID, order=order, disabled=disabled)
    assert text(groups) == ORIGINAL


@pytest.mark.parametrize(
    ("key", "literal", "problem"),
    [
        ("context.char_budget", "10", "char_budget"),  # below the model's minimum
        ("context.no_such_key", "1", "no_such_key"),  # extra="forbid"
        ("context.char_budget", "twelve", "not a TOML value"),
        ("persona", "[1, 2", "not a TOML value"),
        # issue 28: an unknown persona was saved, and the bot ran on built-in defaults
        ("persona", '"nonexistent"', "人设「nonexistent」不存在；已安装的人设：pallas"),
        ("models.gpt-4o.mini.input_price", "0.1", "models"),  # unquoted dots: nested tables
        ('models."gpt-4o-mini.input_price', "0.1", "不是合法的配置键"),
    ],
)
def test_rejected_value_writes_nothing(groups: Path, key: str, literal: str, problem: str) -> None:
    with pytest.raises(ConfigRejected, match=problem):
        config_edit.set_value(groups, GID, key, literal)
    assert text(groups) == ORIGINAL


def test_set_value_creates_tables_and_keeps_the_rest(groups: Path) -> None:
    config = config_edit.set_value(groups, GID, "routing.enabled", "false")
    assert config.routing.enabled is False
    assert "[routing]" in text(groups) and "# budget tuned by hand" in text(groups)
    config = config_edit.set_value(groups, GID, "context.char_budget", "15000")
    assert config.context.char_budget == 15000 and text(groups).count("char_budget") == 1


def test_a_quoted_key_names_one_table(groups: Path) -> None:
    """Issue 28: `models."gpt-4o-mini".input_price` (the docs' own form) was saved as
    `[models."\"gpt-4o-mini\""]`, so the price never applied."""
    config = config_edit.set_value(groups, GID, 'models."gpt-4o-mini".input_price', "0.15")
    assert config.models["gpt-4o-mini"].input_price == 0.15
    assert tomllib.loads(text(groups))["models"] == {"gpt-4o-mini": {"input_price": 0.15}}
    assert config_edit.key_path('a."b.c".d') == ["a", "b.c", "d"]


def test_a_quoted_number_keeps_the_fields_type(groups: Path) -> None:
    """Issue 28: "0.2" was saved as a string."""
    config = config_edit.set_value(groups, GID, "routing.ambient.rate", '"0.2"')
    assert config.routing.ambient.rate == 0.2
    assert tomllib.loads(text(groups))["routing"]["ambient"]["rate"] == 0.2
    config_edit.set_value(groups, GID, "routing.enabled", '"false"')
    assert tomllib.loads(text(groups))["routing"]["enabled"] is False
    config_edit.set_value(groups, GID, "persona", '"pallas"')  # a string field stays a string
    assert tomllib.loads(text(groups))["persona"] == "pallas"


def test_a_key_is_reset_to_its_default(groups: Path) -> None:
    config_edit.set_value(groups, GID, "routing.ambient.rate", "0.5")
    config = config_edit.reset_value(groups, GID, "routing.ambient.rate")
    assert (
        config.routing.ambient.rate
        == GroupConfigStore(GroupConfig, groups).get(1).routing.ambient.rate
    )
    assert "routing" not in tomllib.loads(text(groups)), "the emptied tables go too"
    assert "# budget tuned by hand" in text(groups)
    with pytest.raises(ConfigRejected, match="没有"):
        config_edit.reset_value(groups, GID, "routing.ambient.rate")


def test_an_installed_persona_is_accepted(groups: Path) -> None:
    assert config_edit.set_value(groups, GID, "persona", '"pallas"').persona == "pallas"
    with pytest.raises(ConfigRejected, match="不存在"):
        config_edit.save_text(groups, GID, 'persona = "../../etc/passwd"\n')
    assert 'persona = "pallas"' in text(groups)


def test_whole_file_edit_is_validated(groups: Path) -> None:
    with pytest.raises(ConfigRejected, match="cannot parse"):
        config_edit.save_text(groups, GID, "[context\nchar_budget = 1")
    with pytest.raises(ConfigRejected, match="persona"):
        config_edit.save_text(groups, GID, "persona = 3\n")
    assert text(groups) == ORIGINAL
    config_edit.save_text(groups, GID, "# new\nenabled = false\n")
    assert GroupConfigStore(GroupConfig, groups).get(GID).enabled is False


def test_a_group_without_a_file_gets_one(groups: Path) -> None:
    config_edit.set_pipeline(groups, 777, order=None, disabled=["current_time"])
    assert (groups / "777.toml").exists()


def test_merged_values_name_their_origin(groups: Path) -> None:
    merged = GroupConfigStore(GroupConfig, groups).get(GID)
    rows = {r.key: r for r in config_edit.merged_with_origin(groups, GID, merged)}
    assert rows["context.char_budget"].origin == f"{GID}.toml"
    assert rows["context.char_budget"].value == 9000
    assert rows["enabled"].origin == "default.toml"  # set in config/groups/default.toml
    assert rows["context.partial_keep_min_chars"].origin in ("built-in", "default.toml")
    assert rows["chat.merge_window_s"].value == merged.chat.merge_window_s
