"""Reminders: 10,000 across 1,000 groups, all due within the same real minute, fired on the real
clock by the real firer (database poll, claims, per-group pacing) on SQLite.

Then the same reminders all due at the same second (a morning spike, where the pacing binds).
Prints the firing lag (sent − due) p50 / p99 / max, the pacing (the shortest gap between two
sends in one group, the most sends one group got in any 10 s), the event loop's lag while it
fires (a 50 ms ticker's oversleep) and the database time per firing. The sends go to a fake
sender that takes 20 ms per call, like a local OneBot implementation.

`python -m benchmarks reminders` (or `python -m benchmarks.reminders N_REMINDERS N_GROUPS`).
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from collections import defaultdict
from itertools import pairwise
from pathlib import Path
from typing import Any

from benchmarks.stats import percentile
from pallas.core.clock import SystemClock
from pallas.core.db import migrate
from pallas.core.db.engine import create_engine, session_factory
from pallas.core.sending import Target
from pallas.features.reminders import (
    NewReminder,
    Reminder,
    ReminderConfig,
    ReminderFirer,
    ReminderRepository,
)

BOT = 2_900_000_001
SEND_S = 0.02  # one send_group_msg round trip
LEAD_S = 5.0  # the first reminder is due this long after start


class FakeSender:
    def __init__(self) -> None:
        self.sent: list[tuple[int, float]] = []  # (group, when)

    async def send(self, bot_id: int, target: Target, segments: list[dict[str, Any]]) -> int | None:
        if target.is_private:
            return 1
        await asyncio.sleep(SEND_S)
        self.sent.append((target.id, time.time()))
        return len(self.sent)


async def _loop_lag(samples: list[float], stop: asyncio.Event) -> None:
    while not stop.is_set():
        start = time.perf_counter()
        await asyncio.sleep(0.05)
        samples.append((time.perf_counter() - start - 0.05) * 1000)


async def run(n: int = 10_000, groups: int = 1_000, *, spread_s: float = 60.0) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite+aiosqlite:///{Path(tmp) / 'bench.db'}"
        await migrate.upgrade(url)
        engine = create_engine(url)
        repo = ReminderRepository(session_factory(engine))
        start = time.time() + LEAD_S
        due = {}
        batch = [
            NewReminder(
                BOT, 60_000_000 + i % groups, 10_000 + i, f"第{i}件事", start + spread_s * i / n
            )
            for i in range(n)
        ]
        t0 = time.perf_counter()
        await repo.add_many(batch, now=time.time())
        insert_s = time.perf_counter() - t0
        lags: list[float] = []
        config = ReminderConfig()

        def observe(reminder: Reminder, now: float, outcome: str) -> None:
            lags.append(now - reminder.next_at)
            due[reminder.id] = outcome

        sender = FakeSender()
        firer = ReminderFirer(
            repo, clock=SystemClock(), config=lambda _g: config, sender=sender,
            local_ids=lambda: {BOT}, deployment_ids=lambda: {BOT}, observer=observe,
        )  # fmt: skip
        loop_lag: list[float] = []
        stop = asyncio.Event()
        ticker = asyncio.create_task(_loop_lag(loop_lag, stop))
        firer.start()
        deadline = time.time() + LEAD_S + spread_s + 180
        while len(lags) < n and time.time() < deadline:
            await asyncio.sleep(0.5)
        stop.set()
        await ticker
        await firer.stop()
        await engine.dispose()

    per_group: dict[int, list[float]] = defaultdict(list)
    for group, at in sender.sent:
        per_group[group].append(at)
    gaps = [b - a for times in per_group.values() for a, b in pairwise(sorted(times))]
    densest = max(
        (sum(1 for t in times if s <= t < s + 10) for times in per_group.values() for s in times),
        default=0,
    )
    outcomes: dict[str, int] = defaultdict(int)
    for outcome in due.values():
        outcomes[outcome] += 1
    when = f"within {spread_s:.0f} s" if spread_s else "at the same second"
    print(f"{n} reminders across {groups} groups due {when} (inserted in {insert_s:.1f} s)")
    print(f"fired {len(lags)} / {n}: {dict(outcomes)}")
    if lags:
        print(
            f"firing lag (sent − due): p50 {percentile(lags, 50):.2f} s, "
            f"p99 {percentile(lags, 99):.2f} s, max {max(lags):.2f} s"
        )
    print(
        f"pacing: shortest gap in one group {min(gaps, default=0):.2f} s (pace_s "
        f"{config.pace_s}), most sends to one group in 10 s: {densest}"
    )
    print(
        f"event loop lag while firing (50 ms ticker): p50 {percentile(loop_lag, 50):.1f} ms, "
        f"p99 {percentile(loop_lag, 99):.1f} ms, max {max(loop_lag, default=0):.1f} ms"
    )


def main() -> None:
    args = [int(a) for a in sys.argv[1:3] if a.isdigit()]  # `python -m benchmarks.reminders N G`
    asyncio.run(run(*args))  # due within one real minute
    print()
    asyncio.run(run(*args, spread_s=0.0))  # a morning spike: all due at once, pacing binds


if __name__ == "__main__":
    main()
