"""`local_day`: the date a moment falls on at a UTC offset (budgets and ledgers roll over at
local midnight), also when the day asked for last time is reused."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from pallas.core.clock import local_day


def _utc(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


@pytest.mark.parametrize(
    ("moment", "offset", "day"),
    [
        ("2026-12-01T15:59:59.999999", 8.0, "2026-12-01"),  # 23:59:59.999999 in Shanghai
        ("2026-12-01T16:00:00", 8.0, "2026-12-02"),  # Shanghai midnight
        ("2026-12-01T16:00:00.000001", 8.0, "2026-12-02"),
        ("2026-12-02T15:59:59", 8.0, "2026-12-02"),
        ("2026-12-01T23:59:59", 0.0, "2026-12-01"),
        ("2026-12-02T00:00:00", 0.0, "2026-12-02"),
        ("2026-12-02T05:29:59", -5.5, "2026-12-01"),
        ("2026-12-02T05:30:00", -5.5, "2026-12-02"),
        ("2026-12-31T16:00:00", 8.0, "2027-01-01"),  # a new year
        ("2028-02-28T16:00:00", 8.0, "2028-02-29"),  # a leap day
    ],
)
def test_a_moment_falls_on_its_local_date(moment: str, offset: float, day: str) -> None:
    assert local_day(_utc(moment), utc_offset_hours=offset) == day


def test_going_back_and_forth_across_midnight_gives_each_side_its_own_date() -> None:
    midnight = _utc("2026-12-01T16:00:00")  # Shanghai
    sequence = [midnight - 1, midnight, midnight - 0.5, midnight + 86_399, midnight + 86_400]
    assert [local_day(t) for t in sequence] == [
        "2026-12-01",
        "2026-12-02",
        "2026-12-01",
        "2026-12-02",
        "2026-12-03",
    ]
    # another offset in between does not disturb the remembered day of the first
    assert local_day(midnight, utc_offset_hours=0.0) == "2026-12-01"
    assert local_day(midnight) == "2026-12-02"
