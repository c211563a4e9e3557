"""Text made storable on every backend, and which write errors are about the values."""

from __future__ import annotations

import pytest
from sqlalchemy import exc as sa_exc

from pallas.core.db.types import String, Text, storable_text
from pallas.core.db.writer import refuses_values


@pytest.mark.parametrize(
    ("raw", "stored"),
    [
        ("plain ascii", "plain ascii"),
        ("a\x00b\x00", "ab"),
        ("博士🐑", "博士🐑"),
        ("半个表情\ud83d", "半个表情\ufffd"),  # lone high surrogate
        ("\ude00开头", "\ufffd开头"),  # lone low surrogate
        ("\ud83d\ude00", "😀"),  # a pair left as two code points is joined
        ("卡\x00片\ud83d", "卡片\ufffd"),
        ("", ""),
    ],
)
def test_storable_text(raw: str, stored: str) -> None:
    assert storable_text(raw) == stored
    stored.encode("utf-8")  # encodable by either driver


def test_clean_text_is_returned_as_is() -> None:
    text = "博士晚上好" * 100
    assert storable_text(text) is text


def test_column_types_clean_bound_values_only() -> None:
    for column_type in (Text(), String(16)):
        bind = column_type.process_bind_param
        assert bind("a\x00\ud83d", None) == "a\ufffd"  # type: ignore[arg-type]
        assert bind(None, None) is None  # type: ignore[arg-type]
    assert String(16).impl.length == 16  # type: ignore[attr-defined]


class _DriverError(Exception):
    def __init__(self, sqlstate: str | None) -> None:
        super().__init__(sqlstate)
        self.sqlstate = sqlstate


def _wrapped(sqlstate: str | None) -> sa_exc.DBAPIError:
    return sa_exc.DBAPIError("INSERT …", {}, _DriverError(sqlstate))


@pytest.mark.parametrize(
    ("error", "about_values"),
    [
        (OverflowError("Python int too large to convert to SQLite INTEGER"), True),
        (UnicodeEncodeError("utf-8", "\ud83d", 0, 1, "surrogates not allowed"), True),
        (sa_exc.IntegrityError("INSERT …", {}, Exception("NOT NULL constraint failed")), True),
        (_wrapped("22021"), True),  # PostgreSQL: character not in repertoire (U+0000)
        (_wrapped("22000"), True),  # asyncpg: value out of int64 range
        (_wrapped("23502"), True),  # not-null violation
        (_wrapped("53100"), False),  # disk full
        (_wrapped("40P01"), False),  # deadlock
        (_wrapped(None), False),
        (sa_exc.OperationalError("INSERT …", {}, Exception("database is locked")), False),
        (ConnectionRefusedError(111, "Connect call failed"), False),
        (RuntimeError("database is locked"), False),
    ],
)
def test_refuses_values(error: BaseException, about_values: bool) -> None:
    assert refuses_values(error) is about_values
