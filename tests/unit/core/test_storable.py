"""What the edge makes of values no database or hash takes (issue 44), table by table."""

from __future__ import annotations

import json
import math
import os
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pallas.core.storable import needs_cleaning, storable_text, storable_value

FUZZ_EXAMPLES = int(os.environ.get("PALLAS_FUZZ_EXAMPLES", "0"))


@pytest.mark.parametrize(
    ("text", "stored"),
    [
        ("普通的话", "普通的话"),
        ("\ud800", "\ufffd"),
        ("半\udfff截", "半\ufffd截"),
        ("😀\ud83d", "😀\ufffd"),
        ("前\x00后", "前后"),
        ("\u202e\ufeff", "\u202e\ufeff"),  # odd but storable: left as sent
        ("", ""),
    ],
)
def test_text_is_storable_and_says_the_same(text: str, stored: str) -> None:
    assert storable_text(text) == stored
    storable_text(text).encode("utf-8")  # a hash and both databases take it


@pytest.mark.parametrize(
    ("value", "stored"),
    [
        (2**63 - 1, 2**63 - 1),
        (2**63, str(2**63)),
        (-(2**70), str(-(2**70))),
        (float("nan"), None),
        (float("-inf"), None),
        (1.5, 1.5),
        (True, True),
        ({"id": 2**64, "t": "\ud800"}, {"id": str(2**64), "t": "\ufffd"}),
        ([{"a": [float("inf")]}], [{"a": [None]}]),
    ],
)
def test_values_fit_both_databases(value: Any, stored: Any) -> None:
    assert storable_value(value) == stored


def test_a_clean_value_is_returned_as_it_was() -> None:
    frame = {"message": [{"type": "text", "data": {"text": "好"}}], "time": 1}
    assert storable_value(frame) is frame


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(st.characters(codec=None, exclude_categories=())),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=10,
)


@settings(max_examples=FUZZ_EXAMPLES or 200, derandomize=not FUZZ_EXAMPLES, database=None)
@given(json_values)
def test_whatever_json_holds_comes_out_storable(value: Any) -> None:
    """Every string encodes as UTF-8 without NUL, every number fits 64 bits or is finite, and
    the raw look (`needs_cleaning`) never misses a frame that the walk changes."""
    cleaned = storable_value(value)
    text = json.dumps(cleaned, ensure_ascii=False, allow_nan=False)
    text.encode("utf-8")
    assert "\x00" not in text and "\\u0000" not in text
    if cleaned != value or _has_nan(value):
        assert needs_cleaning(json.dumps(value))
        assert needs_cleaning(json.dumps(value).encode("utf-8"))  # a bytes frame


def _has_nan(value: Any) -> bool:
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, list):
        return any(_has_nan(v) for v in value)
    if isinstance(value, dict):
        return any(_has_nan(v) for v in value.values())
    return False
