"""Cost guard on the reply path: StateStore counters vs a ledger aggregate per turn.

Fills a SQLite usage ledger (groups × tasks × models × 30 China days), then times per turn:
`CostGuard.check` (budget counters + member bucket, in-memory StateStore) against what reading
today's usage from the DB would cost (`UsageRepository.totals` for the group and the
deployment). Prints percentiles and the ratio. `python -m benchmarks cost_guard`.
"""

from __future__ import annotations

import asyncio
import random
import shutil
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from sqlalchemy import insert
from sqlalchemy.ext.asyncio import async_sessionmaker

from benchmarks.stats import describe, percentile
from pallas.config import GroupConfig
from pallas.core.clock import FakeClock, local_day
from pallas.core.db import migrate
from pallas.core.db.engine import create_engine, session_factory
from pallas.core.db.models import UsageLedgerRow
from pallas.core.db.repositories.usage import UsageRepository
from pallas.core.state import MemoryStateStore
from pallas.core.turn import TurnInput
from pallas.features.cost.counters import UsageCounters
from pallas.features.cost.guard import CostGuard
from pallas.features.cost.ladder import Limits
from pallas.routing.evaluate import duplicate_result
from pallas.routing.triggers import TriggerKind

GROUPS, DAYS, BOT = 200, 30, 1
TASKS = ("chat", "cheap", "vision", "embedding")
T0 = 1_760_000_000.0


async def _fill(sessions: async_sessionmaker) -> int:
    rows = [
        {
            "day": local_day(T0 - day * 86_400),
            "bot_id": BOT,
            "group_id": group,
            "task": task,
            "model": model,
            "calls": 3,
            "failures": 0,
            "prompt_tokens": 2700,
            "completion_tokens": 180,
        }
        for day in range(DAYS + 1)
        for group in range(GROUPS)
        for task in TASKS
        for model in ("m1", "m2")
    ]
    async with sessions() as session:
        await session.execute(insert(UsageLedgerRow), rows)
        await session.commit()
    return len(rows)


async def run(turns: int) -> None:
    workdir = Path(tempfile.mkdtemp(prefix="pallas-bench-cost-"))
    url = f"sqlite+aiosqlite:///{workdir / 'bench.db'}"
    await migrate.upgrade(url)
    engine = create_engine(url)
    sessions = session_factory(engine)
    usage = UsageRepository(sessions)
    try:
        started = time.perf_counter()
        rows = await _fill(sessions)
        print(f"ledger: {rows} rows in {time.perf_counter() - started:.1f}s")
        clock = FakeClock(T0)
        guard = CostGuard(
            UsageCounters(MemoryStateStore(clock), usage),
            deployment=Limits(100_000, 0),
            rng=random.Random(1),
        )
        config = GroupConfig()
        rng = random.Random(5)
        guard_ms, db_ms = [], []
        for i in range(turns):
            clock.advance(7.0)
            group = rng.randrange(GROUPS)
            turn = TurnInput(BOT, group, 1000 + i % 50, i, clock.now(), "在吗")
            base = duplicate_result(turn, clock.now())
            trigger = replace(base.trigger, kind=TriggerKind.AT, addressed=True)
            route = replace(base, trigger=trigger)
            t = time.perf_counter()
            verdict = await guard.check(turn, route, config, clock.now())
            if verdict.proceeds:
                await guard.record(turn, clock.now(), images=False, tokens=960)
            guard_ms.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            await usage.totals(now=clock.now(), bot_id=BOT, group_id=group, task="chat")
            await usage.totals(now=clock.now(), task="chat")
            db_ms.append((time.perf_counter() - t) * 1000)
        print(describe("guard check+record / turn", guard_ms))
        print(describe("ledger aggregate / turn", db_ms))
        print(
            "ledger / guard at p50: "
            f"{percentile(db_ms, 50) / max(percentile(guard_ms, 50), 1e-9):.1f}x"
        )
        print("(the first turn of each group and day seeds from the ledger: the guard's max)")
    finally:
        await engine.dispose()
        shutil.rmtree(workdir, ignore_errors=True)


def main(argv: list[str] | None = None) -> None:
    asyncio.run(run(turns=2000))


if __name__ == "__main__":
    main()
