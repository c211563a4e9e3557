"""The machine's own tail: the same fixed pure-Python work, timed in the same run.

On a shared virtual machine a fixed piece of work does not take a fixed time: after an idle
gap the caches are cold, the vCPU's clock and its neighbours vary. `FixedWork` is sized once
to about `target_ms` and then never changes; timed between a benchmark's turns (after the same
idle gap) its p99 / p50 is what the machine alone adds to a tail, printed next to the turns'
own ratio — the floor a tail is compared against, as ingest compares with a bare NoneBot bot.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

from benchmarks.stats import describe, percentile

_WORDS = ("今天", "活动", "干员", "周末", "视频", "组队", "火锅", "吉他", "咖啡", "早起")
_DIGITS = re.compile(r"[0-9]+")


def _one_round() -> int:
    """Dicts, f-strings, a keyed sort, a join, a regex and a JSON dump (a turn's kind of work)."""
    rows: list[dict[str, Any]] = [
        {"id": i, "text": f"{_WORDS[i % len(_WORDS)]}{i}", "score": i * 7919 % 1000 / 1000}
        for i in range(200)
    ]
    rows.sort(key=lambda row: (-row["score"], row["id"]))
    joined = " ".join(str(row["text"]) for row in rows[:80])
    return len(_DIGITS.sub("", joined)) + len(json.dumps(rows[:20], ensure_ascii=False))


@dataclass
class FixedWork:
    target_ms: float = 5.0
    rounds: int = 0
    back_to_back_ms: float = 0.0  # one sample's time when run repeatedly, measured once
    wall_ms: list[float] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)

    def calibrate(self) -> None:
        """Fix the number of rounds so that one sample takes about `target_ms` now."""
        times = []
        for _ in range(30):
            started = time.perf_counter()
            _one_round()
            times.append((time.perf_counter() - started) * 1000)
        one = percentile(times, 50)
        self.rounds = max(1, round(self.target_ms / one))
        self.back_to_back_ms = self.rounds * one

    def sample(self) -> None:
        if not self.rounds:
            self.calibrate()
        started, cpu = time.perf_counter(), time.thread_time()
        for _ in range(self.rounds):
            _one_round()
        self.wall_ms.append((time.perf_counter() - started) * 1000)
        self.cpu_ms.append((time.thread_time() - cpu) * 1000)

    def report(self, label: str, tail_of: list[float]) -> list[str]:
        """The fixed work's distribution and both tail ratios (p99 / p50)."""
        return [
            f"fixed work: {self.rounds} rounds, {self.back_to_back_ms:.2f}ms run back to back",
            describe("fixed work (wall)", self.wall_ms),
            describe("fixed work (cpu)", self.cpu_ms),
            f"tail p99/p50: {label} {_tail(tail_of):.2f}x, "
            f"the same fixed work {_tail(self.wall_ms):.2f}x (wall), "
            f"{_tail(self.cpu_ms):.2f}x (cpu)",
        ]


def _tail(values: list[float]) -> float:
    return percentile(values, 99) / percentile(values, 50) if values else float("nan")


__all__ = ["FixedWork"]
