"""Every config key and table has a Chinese description (pallas/config_zh.toml), and the
console shows it: a key added to a config model without one fails here, naming it."""

from __future__ import annotations

import re

from pallas.web.config_docs import DOCS_PAGE, KeyDocs, chinese_notes, origin_zh, with_reference

CJK = re.compile(r"[\u4e00-\u9fff]")


def test_every_key_and_table_has_a_chinese_description() -> None:
    keys, tables = KeyDocs.schema_paths()
    zh = chinese_notes()
    missing = sorted(".".join(p) for p in keys | tables if not CJK.search(zh.get(p, "")))
    assert not missing, (
        "these config keys have no Chinese description; add a line to pallas/config_zh.toml: "
        + ", ".join(missing)
    )


def test_no_description_names_a_key_that_is_gone() -> None:
    keys, tables = KeyDocs.schema_paths()
    stale = sorted(".".join(p) for p in chinese_notes() if p not in keys | tables)
    assert not stale, "pallas/config_zh.toml describes keys no model declares: " + ", ".join(stale)


def test_the_console_reads_the_chinese_first_and_keeps_the_english_note() -> None:
    docs = KeyDocs.load()
    assert docs.key(("chat", "merge_window_s")).startswith("被 @ 后等")
    assert docs.key(("models", "gpt-4o-mini", "input_price")) == "输入每百万 tokens 价格"
    assert docs.table(("routing", "ambient")) == "主动插话：偶尔加入没人 @ 它的对话"
    assert "Wait this long" in docs.english_key(("chat", "merge_window_s"))


def test_sources_read_in_chinese() -> None:
    assert origin_zh("built-in") == "内置默认"
    assert origin_zh("default.toml") == "default.toml"
    assert origin_zh("738291046.toml") == "本群文件"


def test_the_docs_list_every_key_with_the_same_chinese() -> None:
    page = DOCS_PAGE.read_text(encoding="utf-8")
    assert with_reference(page) == page, (
        "docs/configuration.md's key table is out of date: run python -m pallas.web.config_docs"
    )
