"""Config keys grouped by TOML table, each with the description its model or the docs give."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from pydantic import BaseModel, Field

from pallas.config import GroupConfig
from pallas.core.config_files import GroupConfigStore
from pallas.web.config_docs import KeyDocs, group_keys, schema_path, source_notes
from pallas.web.config_edit import key_path, merged_with_origin, set_value

REPO = Path(__file__).resolve().parents[3]
GID = 5150


@pytest.fixture
def groups(tmp_path: Path) -> Path:
    shutil.copytree(REPO / "config" / "groups", tmp_path / "groups")
    shutil.copytree(REPO / "config" / "personas", tmp_path / "personas")
    return tmp_path / "groups"


def rows(groups: Path) -> list:  # type: ignore[type-arg]
    merged = GroupConfigStore(GroupConfig, groups).get(GID)
    return merged_with_origin(groups, GID, merged)


def test_most_keys_have_a_description(groups: Path) -> None:
    docs = KeyDocs.load()
    all_rows = rows(groups)
    described = [r.key for r in all_rows if docs.key(tuple(key_path(r.key)))]
    assert len(all_rows) > 300
    assert len(described) / len(all_rows) >= 0.8, f"{len(described)} of {len(all_rows)}"


class _Sample(BaseModel):
    """A sample table."""

    plain: int = 1  # the trailing comment
    # a block of two lines
    # right above the field
    above: int = 2
    # switches
    header_only: bool = True
    described: int = Field(default=3, description="from Field")  # not this comment
    wrapped: int = Field(  # the comment on a wrapped field's first line
        default=4, ge=0
    )


@pytest.mark.parametrize(
    ("field", "note"),
    [
        ("plain", "the trailing comment"),
        ("above", "a block of two lines right above the field"),
        ("wrapped", "the comment on a wrapped field's first line"),
        ("header_only", None),  # a one-word group header describes no field
    ],
)
def test_source_comments_describe_fields(field: str, note: str | None) -> None:
    assert source_notes(_Sample).get(field) == note


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("routing.necessity.to_me", ("routing", "necessity", "to_me")),
        ('models."gpt-4.1".input_price', ("models", "*", "input_price")),
        ("no_such.key", None),
    ],
)
def test_schema_paths_see_dict_keys_as_any(key: str, expected: tuple[str, ...] | None) -> None:
    assert schema_path(tuple(key_path(key))) == expected


def test_keys_are_grouped_by_table_with_descriptions(groups: Path) -> None:
    set_value(groups, GID, 'models."gpt-4.1".input_price', "2.0")
    found = group_keys(rows(groups), group_file=f"{GID}.toml")
    by_table = {g.table: g for g in found}
    ambient = by_table["routing.ambient"]
    assert ambient.description == "主动插话：偶尔加入没人 @ 它的对话"
    rate = next(k for k in ambient.keys if k.name == "rate")
    assert (
        rate.key == "routing.ambient.rate"
        and rate.description == "每条符合条件的消息触发插话的概率"
    )
    assert rate.english == "chance per eligible message"  # the source's note, as a tooltip
    model = by_table['models."gpt-4.1"']  # a model name with a dot is one table, not three
    price = next(k for k in model.keys if k.name == "input_price")
    assert price.value == 2.0 and price.description and model.changed == 1
    assert key_path(price.key) == ["models", "gpt-4.1", "input_price"]  # what reset takes
    top = by_table[""]
    assert {k.name for k in top.keys} >= {"enabled", "persona"}


def test_the_filter_matches_descriptions_too(groups: Path) -> None:
    for query in ("Eligible MESSAGE", "触发插话的概率"):
        found = group_keys(rows(groups), group_file=f"{GID}.toml", query=query)
        assert [(g.table, [k.name for k in g.keys]) for g in found] == [
            ("routing.ambient", ["rate"])
        ]
