"""The benchmarks' interval of a percentile difference: what a budget is judged against."""

from __future__ import annotations

import math

import pytest

from benchmarks.stats import difference_interval, percentile


@pytest.mark.parametrize(
    ("shift", "pct"),
    [(0.0, 50), (0.0, 99), (10.0, 50), (10.0, 90), (-3.0, 99)],
)
def test_the_interval_holds_the_shift_between_two_samples(shift: float, pct: float) -> None:
    base = [float(i % 37) + (i % 5) * 0.1 for i in range(400)]
    moved = [v + shift for v in base]
    low, high = difference_interval(moved, base, pct, rounds=300)
    assert low <= shift <= high
    assert low <= percentile(moved, pct) - percentile(base, pct) <= high


def test_a_noisier_tail_gives_a_wider_interval_at_p99_than_at_p50() -> None:
    tail = [1.0] * 390 + [5.0, 9.0, 14.0, 20.0, 30.0, 41.0, 2.0, 3.0, 60.0, 80.0]
    flat = [1.0] * 400
    p50 = difference_interval(tail, flat, 50, rounds=300)
    p99 = difference_interval(tail, flat, 99, rounds=300)
    assert p50 == (0.0, 0.0)
    assert p99[1] - p99[0] > 10.0


def test_the_same_seed_gives_the_same_interval_and_no_sample_none() -> None:
    a = [float(i * 7 % 101) for i in range(300)]
    b = [float(i * 3 % 89) for i in range(300)]
    assert difference_interval(a, b, 99, rounds=300) == difference_interval(a, b, 99, rounds=300)
    assert all(math.isnan(x) for x in difference_interval([], b, 99))
