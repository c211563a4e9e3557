"""Small helpers for printing benchmark distributions."""

from __future__ import annotations

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
