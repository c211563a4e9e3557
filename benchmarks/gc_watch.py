"""Garbage-collector pauses seen during a span of code (`gc.callbacks`), for benchmarks."""

from __future__ import annotations

import gc
import time
from typing import Any


class GcWatch:
    """Records each collection's generation and pause; `take()` returns and clears them."""

    def __init__(self) -> None:
        self._started = 0.0
        self._pauses: list[tuple[int, float]] = []  # (generation, ms)

    def __enter__(self) -> GcWatch:
        gc.callbacks.append(self._callback)
        return self

    def __exit__(self, *_: object) -> None:
        gc.callbacks.remove(self._callback)

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            ms = (time.perf_counter() - self._started) * 1000
            self._pauses.append((int(info.get("generation", 0)), ms))

    def take(self) -> list[tuple[int, float]]:
        pauses, self._pauses = self._pauses, []
        return pauses


def gc_summary(pauses: list[tuple[int, float]]) -> str:
    """`gen2×1 31.0ms, gen0×3 0.4ms` — collections by generation with their total pause."""
    parts = []
    for gen in (2, 1, 0):
        ms = [p for g, p in pauses if g == gen]
        if ms:
            parts.append(f"gen{gen}×{len(ms)} {sum(ms):.1f}ms")
    return ", ".join(parts) or "none"
