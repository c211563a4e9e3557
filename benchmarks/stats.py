"""Small helpers for printing benchmark distributions."""

from __future__ import annotations

import random
from collections.abc import Sequence


def percentile(values: Sequence[float], pct: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(pct / 100 * (len(ordered) - 1))))
    return ordered[index]


def describe(name: str, values: Sequence[float], unit: str = "ms") -> str:
    return (
        f"{name:<28} n={len(values):<5} p50={percentile(values, 50):8.2f}{unit} "
        f"p90={percentile(values, 90):8.2f}{unit} p99={percentile(values, 99):8.2f}{unit} "
        f"max={max(values) if values else float('nan'):8.2f}{unit}"
    )


def difference_interval(
    a: Sequence[float], b: Sequence[float], pct: float, *, rounds: int = 2000, seed: int = 0
) -> tuple[float, float]:
    """A 95 % bootstrap interval of `percentile(a, pct) - percentile(b, pct)`: both samples
    drawn again with replacement `rounds` times. A p99 of a few hundred turns is its few worst
    turns, and runs of the same code differ by several ms there; the interval says how far
    one run's figure can be trusted against a budget."""
    if not a or not b:
        return float("nan"), float("nan")
    rng = random.Random(seed)
    diffs = sorted(
        percentile(rng.choices(a, k=len(a)), pct) - percentile(rng.choices(b, k=len(b)), pct)
        for _ in range(rounds)
    )
    return percentile(diffs, 2.5), percentile(diffs, 97.5)
