"""Knowledge placeholders: parsing, each activation mode, chunking of imported files."""

from __future__ import annotations

import pytest

from pallas.features.kb.config import KnowledgePlaceholderConfig
from pallas.features.kb.importer import chunk_text
from pallas.features.kb.placeholders import decide_activation, find_placeholders, parse_placeholder

CONFIG = KnowledgePlaceholderConfig(default_pool="", default_count=3, default_min_score=0.15)


@pytest.mark.parametrize(
    ("raw", "pool", "count", "score", "mode", "param", "error"),
    [
        ("【kb】", "", 3, 0.15, "always", "", ""),
        ("【knowledge】", "", 3, 0.15, "always", "", ""),
        ("【kb::lore】", "lore", 3, 0.15, "always", "", ""),
        ("【kb::lore::5::0.4】", "lore", 5, 0.4, "always", "", ""),
        ("【kb::lore::2::0.2::gate::苹果|罗德岛】", "lore", 2, 0.2, "gate", "苹果|罗德岛", ""),
        ("【kb::::::::turn::3】", "", 3, 0.15, "turn", "3", ""),
        ("【kb::rules::1::::static::rules】", "rules", 1, 0.15, "static", "rules", ""),
        ("【kb::lore::many】", "lore", 3, 0.15, "always", "", "bad_count"),
        ("【kb::lore::2::high】", "lore", 2, 0.15, "always", "", "bad_min_score"),
        ("【kb::lore::2::0.1::sometimes】", "lore", 2, 0.1, "always", "", "unknown_mode:sometimes"),
        ("【kb::lore::99】", "lore", 20, 0.15, "always", "", ""),
    ],
)
def test_parse(raw, pool, count, score, mode, param, error) -> None:
    ph = parse_placeholder(raw, CONFIG)
    assert (ph.pool, ph.count, ph.min_score, ph.mode, ph.param, ph.error) == (
        pool,
        count,
        score,
        mode,
        param,
        error,
    )


@pytest.mark.parametrize(
    ("raw", "query", "turn", "active", "reason"),
    [
        ("【kb】", "随便聊聊", 1, True, "always"),
        ("【kb::lore::3::0::gate::苹果|罗德岛】", "能天使爱吃苹果吗", 1, True, "gate_hit:苹果"),
        ("【kb::lore::3::0::gate::Apple】", "i like APPLE pie", 1, True, "gate_hit:Apple"),
        ("【kb::lore::3::0::gate::苹果|罗德岛】", "今天好热", 1, False, "gate_miss"),
        ("【kb::lore::3::0::gate】", "苹果", 1, False, "gate_without_keywords"),
        ("【kb::lore::3::0::turn::3】", "x", 1, True, "turn_1_every_3"),
        ("【kb::lore::3::0::turn::3】", "x", 2, False, "turn_2_every_3"),
        ("【kb::lore::3::0::turn::3】", "x", 4, True, "turn_4_every_3"),
        ("【kb::lore::3::0::turn::oops】", "x", 2, True, "turn_2_every_1"),
        ("【kb::lore::3::0::turn::2】", "x", 0, False, "turn_unknown"),
        ("【kb::rules::1::0::static::rules】", "无关", 5, True, "static"),
    ],
)
def test_activation_modes(raw, query, turn, active, reason) -> None:
    result = decide_activation(parse_placeholder(raw, CONFIG), query=query, turn_index=turn)
    assert (result.active, result.reason) == (active, reason)


def test_find_placeholders_ignores_other_headers() -> None:
    text = "【设定】\n你是罗德岛的干员。\n【kb::lore::2】\n【knowledge】【kbx】"
    assert find_placeholders(text) == ["【kb::lore::2】", "【knowledge】"]


def test_chunking_keeps_headings_and_caps_size() -> None:
    text = "# 罗德岛\n\n罗德岛是制药公司。\n\n## 干员\n\n" + "能天使喜欢苹果派。" * 40
    chunks = chunk_text(text, "lore", max_chars=120)
    assert chunks[0].key == "lore_1" and chunks[0].text == "罗德岛：罗德岛是制药公司。"
    assert all(len(c.text) <= 120 for c in chunks)
    assert all(c.text.startswith("干员：") for c in chunks[1:])
    assert "".join(c.text.removeprefix("干员：") for c in chunks[1:]) == "能天使喜欢苹果派。" * 40
