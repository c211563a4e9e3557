from __future__ import annotations

import json
import random
from pathlib import Path

from pallas.features.worldbook import WorldbookLibrary
from pallas.features.worldbook.activation import activate_worldbook
from pallas.features.worldbook.loader import (
    load_worldbook_file,
    load_worldbooks,
    parse_worldbook,
    parse_worldbook_json,
)
from pallas.features.worldbook.model import (
    SelectiveLogic,
    WorldbookConfig,
    WorldbookPosition,
    WorldbookState,
)

FIXTURES = Path(__file__).parent / "fixtures"


def test_sillytavern_world_info_import() -> None:
    result = load_worldbook_file(FIXTURES / "rhodes_island.json")
    assert result.ok, [str(e) for e in result.errors]
    assert result.format == "st_world_info"
    assert result.book == "rhodes_island"
    by_uid = {e.uid: e for e in result.entries}
    assert set(by_uid) == {0, 1, 2, 3, 4}
    kal = by_uid[1]
    assert kal.keys == ("凯尔希",) and kal.secondary_keys == ("医生", "医疗")
    assert kal.position is WorldbookPosition.BEFORE_PERSONA and kal.order == 90
    assert (kal.sticky, kal.cooldown, kal.delay) == (2, 1, 0)
    assert kal.key_id == "rhodes_island.1"
    assert kal.source_token == "worldbook:rhodes_island#1"
    ore = by_uid[2]
    assert ore.position is WorldbookPosition.AT_DEPTH and ore.depth == 2 and ore.role == "system"
    assert by_uid[3].constant and not by_uid[4].enabled
    assert by_uid[0].scan_depth is None and by_uid[0].case_sensitive is None


def test_v2_character_book_import() -> None:
    result = load_worldbook_file(FIXTURES / "v2_card.json")
    assert result.ok, [str(e) for e in result.errors]
    assert result.format == "character_book"
    by_uid = {e.uid: e for e in result.entries}
    assert set(by_uid) == {7, 1, 9}  # entry without id takes its index
    pallas = by_uid[7]
    assert pallas.keys == ("帕拉斯", "Pallas") and pallas.secondary_keys == ("雕像",)
    assert pallas.selective and pallas.selective_logic is SelectiveLogic.NOT_ANY
    assert pallas.position is WorldbookPosition.BEFORE_PERSONA and pallas.order == 50
    assert pallas.groups == ("heroes",) and pallas.group_override and pallas.group_weight == 10
    assert (pallas.sticky, pallas.cooldown, pallas.delay) == (3, 2, 5)
    assert pallas.exclude_recursion and not pallas.prevent_recursion
    assert pallas.scan_depth == 6 and pallas.match_whole_words is True
    assert pallas.use_group_scoring is True
    assert not by_uid[1].enabled and by_uid[1].position is WorldbookPosition.AFTER_PERSONA
    depth = by_uid[9]
    assert depth.position is WorldbookPosition.AT_DEPTH and depth.depth == 1
    assert depth.role == "assistant"


def test_bare_character_book_and_entries_array_forms() -> None:
    book = {"entries": [{"keys": ["a"], "content": "A", "insertion_order": 1}]}
    for data in (book, {"character_book": book}):
        result = parse_worldbook(data, book="b")
        assert result.format == "character_book" and len(result.entries) == 1
    st_list = {"entries": [{"uid": 5, "key": ["x"], "content": "X"}]}
    result = parse_worldbook(st_list, book="b")
    assert result.format == "st_world_info" and result.entries[0].uid == 5


def test_malformed_entries_are_reported_and_valid_ones_kept() -> None:
    path = FIXTURES / "malformed.json"
    result = load_worldbook_file(path)
    assert {e.uid for e in result.entries} == {0, 1}
    assert result.entries[1].keys == ("逗号", "分隔")
    messages = {e.entry: e.message for e in result.errors}
    assert all(e.source == str(path) for e in result.errors)
    assert "key: must be a list of strings" in messages["entry 2 (uid=2)"]
    assert "content: missing" in messages["entry 3 (uid=3)"]
    assert "not a valid regular expression" in messages["entry 4 (uid=4)"]
    bad_numbers = messages["entry 5 (uid=5)"]
    assert "probability" in bad_numbers and "selectiveLogic" in bad_numbers
    assert "must be an object" in messages["entry 6"]
    assert "duplicate uid 0" in messages["entry 7 (uid=0)"]
    text = str(result.errors[0])
    assert str(path) in text and "entry 2" in text


def test_file_level_errors() -> None:
    bad_json = parse_worldbook_json("{not json", book="x", source="x.json")
    assert not bad_json.entries and "invalid JSON" in str(bad_json.errors[0])
    not_book = parse_worldbook({"hello": 1}, book="x", source="x.json")
    assert not_book.format == "unknown" and "not a worldbook" in str(not_book.errors[0])
    entries, errors = load_worldbooks(FIXTURES, ["rhodes_island", "missing", "../etc/passwd"])
    assert {e.book for e in entries} == {"rhodes_island"}
    assert any("missing.json" in str(e) and "cannot read" in str(e) for e in errors)
    assert any("plain file names" in str(e) for e in errors)


def test_fixture_activates_end_to_end(tmp_path: Path) -> None:
    copy = tmp_path / "lore.json"
    copy.write_text(json.dumps(json.loads((FIXTURES / "rhodes_island.json").read_text("utf-8"))))
    entries, errors = load_worldbooks(tmp_path, ["lore"])
    assert not errors
    result = activate_worldbook(
        entries,
        ["大家好", "我在罗德岛上，听说有人得了源石病"],
        WorldbookState(),
        1,
        random.Random(0),
        WorldbookConfig(books=("lore",)),
        count_tokens=len,
    )
    assert result.ids == ("lore.3", "lore.2", "lore.0")  # ascending order: 10, 80, 100
    assert result.skip_reason("lore.4") == "disabled"
    assert result.skip_reason("lore.1") == "no_primary_match"
    assert [a.key_id for a in result.at(WorldbookPosition.AT_DEPTH)] == ["lore.2"]
    by_id = {a.key_id: a for a in result.activated}
    assert by_id["lore.0"].matched_key == "罗德岛" and by_id["lore.3"].reason == "constant"


async def test_a_books_keyed_entries_give_the_routing_its_stake_keys(tmp_path: Path) -> None:
    """Constant, disabled and regex-keyed entries have no say; keys are lower-cased; a changed
    book gives new keys."""
    book = tmp_path / "rhodes_island.json"
    book.write_text((FIXTURES / "rhodes_island.json").read_text(encoding="utf-8"), "utf-8")
    library = WorldbookLibrary(tmp_path, check_interval_s=0)
    assert await library.stake_keys(["rhodes_island"]) == {"罗德岛", "rhodes island", "凯尔希"}
    assert await library.stake_keys(["missing_book"]) == frozenset()
    data = json.loads(book.read_text(encoding="utf-8"))
    data["entries"]["99"] = {"uid": 99, "key": ["整合运动"], "content": "反派组织"}
    book.write_text(json.dumps(data, ensure_ascii=False), "utf-8")
    assert "整合运动" in await library.stake_keys(["rhodes_island"])
