from __future__ import annotations

import pytest

from pallas.core.text import contains_cjk
from pallas.ranking import text
from pallas.ranking.text import (
    cjk_bigrams,
    normalize_query,
    tokenize,
    warm_up,
)


@pytest.mark.parametrize(
    ("source", "must_have", "must_not_have"),
    [
        ("我在罗德岛上", {"罗德岛", "罗德", "德岛"}, {"我", "在", "我在"}),
        ("Hello, WORLD!", {"hello", "world"}, {",", "!", " "}),
        ("ＦＵＬＬ　ｗｉｄｔｈ", {"full", "width"}, set()),
        ("小明喜欢吃草莓蛋糕", {"小明", "喜欢", "草莓", "蛋糕", "莓蛋"}, set()),
        ("这是什么？！", set(), {"什么", "？", "！", "这"}),
    ],
)
def test_tokenize_segments_filters_and_adds_bigrams(
    source: str, must_have: set[str], must_not_have: set[str]
) -> None:
    tokens = set(tokenize(source))
    assert must_have <= tokens
    assert not (must_not_have & tokens)


def test_tokenize_is_deterministic_and_empty_safe() -> None:
    assert tokenize("罗德岛的猫叫什么") == tokenize("罗德岛的猫叫什么")
    assert tokenize("") == ()
    assert tokenize("，。！ ?") == ()


def test_bigrams_skip_single_char_stopwords() -> None:
    assert cjk_bigrams("罗德岛的猫") == ["罗德", "德岛"]


def test_jieba_initialised_once(monkeypatch: pytest.MonkeyPatch) -> None:
    warm_up()
    calls: list[int] = []
    monkeypatch.setattr(text.jieba, "initialize", lambda *a, **k: calls.append(1))
    warm_up()
    tokenize("一句从没见过的新句子用来绕过缓存")
    assert calls == []


def test_normalize_query_and_cjk_detection() -> None:
    assert normalize_query("  Hello，World！！ 罗德岛？") == "hello world 罗德岛"
    assert contains_cjk("abc罗") and not contains_cjk("abc")
