"""Console page timings over a large database: `python -m benchmarks.console_pages`.

Builds a SQLite database at heads (the start-up migration), bulk-loads `--messages` message rows
spread over `--groups` groups and 60 days (about 1/60 of them "today"), 30 days of usage ledger
rows per group × task and 200 injection snapshots for one group, then requests every console
page through the real ASGI app (logged in) and prints latency percentiles per page. Aggregate
pages (groups, usage) are the ones the <200 ms at 1,000,000 messages target is about; the
`explain` lines show the index each aggregate query uses.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import shutil
import sqlite3
import tempfile
import time
from pathlib import Path

import httpx
from fastapi import FastAPI

from benchmarks.stats import describe, percentile
from pallas.app import build_app
from pallas.core.clock import FakeClock, local_day
from pallas.core.db import migrate
from pallas.core.settings import PallasSettings
from pallas.core.state import MemoryStateStore
from pallas.runtime import PallasRuntime
from pallas.web import mount_console, start_console
from pallas.web.queries import _SKIP_SCAN, day_start

REPO = Path(__file__).resolve().parents[1]
NOW = 1_764_560_000.0  # 2025-12-01 11:33 Beijing
BOT = 2_900_000_001
TOKEN = "bench-token"
DAYS = 60


def load_rows(db: Path, messages: int, groups: int, seed: int = 7) -> float:
    """Bulk insert with sqlite3 (the app reads it through SQLAlchemy/aiosqlite)."""
    rng = random.Random(seed)
    started = time.perf_counter()
    con = sqlite3.connect(db)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA synchronous=OFF")
    span = DAYS * 86_400
    batch = []
    for i in range(messages):
        at = NOW - span * (1 - i / messages) + rng.random()
        gid = 10_000 + rng.randrange(groups)
        is_bot = rng.random() < 0.08
        batch.append(
            (BOT, gid, i + 1, BOT if is_bot else 100_000 + rng.randrange(3000), "", "", "member",
             "在吗在吗", "[]", "在吗在吗", None, int(is_bot), at)
        )  # fmt: skip
        if len(batch) >= 50_000:
            _flush(con, batch)
    _flush(con, batch)
    usage = [
        (local_day(NOW - d * 86_400), BOT, 10_000 + g, task, "gpt-4o-mini", 40, 0, 9000, 800)
        for d in range(30)
        for g in range(groups)
        for task in ("chat", "cheap", "vision")
    ]
    con.executemany(
        "INSERT INTO usage_ledger (day, bot_id, group_id, task, model, calls, failures, "
        "prompt_tokens, completion_tokens) VALUES (?,?,?,?,?,?,?,?,?)",
        usage,
    )
    snapshot = {
        "decision": {"outcome": "reply", "score": 60, "threshold": 50, "terms": [["to_me", 55]]},
        "sections": [{"id": f"s{i}", "chars": 300, "tokens": 200, "source": "x"} for i in range(8)],
        "messages": [{"role": "user", "kind": "history", "chars": 40, "tokens": 30}] * 20,
        "pipeline": [{"id": f"p{i}", "status": "ok", "ms": 0.1} for i in range(20)],
        "request": [{"role": "user", "content": "在吗" * 200}] * 20,
    }
    con.executemany(
        "INSERT INTO injection_snapshot (turn_id, bot_id, group_id, user_id, message_id, "
        "created_at, model, outcome, data) VALUES (?,?,?,?,?,?,?,?,?)",
        [
            (f"t{i}", BOT, 10_000, 1, i, NOW - i, "m", "delivered", json.dumps(snapshot))
            for i in range(200)
        ],
    )
    con.commit()  # no ANALYZE: the bot never runs it, so the planner works without statistics
    con.close()
    return time.perf_counter() - started


def _flush(con: sqlite3.Connection, batch: list) -> None:
    con.executemany(
        "INSERT INTO message (self_id, group_id, message_id, user_id, card, nickname, role, "
        "raw_message, segments, plain_text, reply_to, is_bot, time) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
        batch,
    )
    batch.clear()


def explain(db: Path) -> list[str]:
    con = sqlite3.connect(db)
    queries = {
        "messages today": "SELECT self_id + 0, group_id + 0, count(*), sum(is_bot) FROM message "
        f"WHERE time >= {day_start(NOW)} GROUP BY self_id + 0, group_id + 0",
        "groups seen": str(_SKIP_SCAN).replace(":limit", "5000"),
    }
    out = []
    for name, sql in queries.items():
        steps = [row[-1] for row in con.execute(f"EXPLAIN QUERY PLAN {sql}")]
        plan = " | ".join(step for step in steps if step.startswith(("SEARCH", "SCAN message")))
        out.append(f"explain {name}: {plan}")
    con.close()
    return out


async def measure(db: Path, workdir: Path, rounds: int) -> dict[str, list[float]]:
    shutil.copytree(REPO / "config", workdir / "config")
    clock = FakeClock(NOW)
    runtime = await PallasRuntime.start(
        PallasSettings(
            database_url=f"sqlite+aiosqlite:///{db}",
            pallas_config_dir=workdir / "config",
            pallas_data_dir=workdir / "data",
            pallas_console_token=TOKEN,
        ),
        clock=clock,
        state=MemoryStateStore(clock),
    )
    app = FastAPI()
    pallas = build_app(runtime)
    console = mount_console(app, pallas.console_backend)
    start_console(console, runtime.settings, runtime.state, runtime.clock, "127.0.0.1", 8080)
    pages = {
        "groups (aggregate)": "/console/",
        "usage 30d (aggregate)": "/console/usage",
        "usage 1 group": "/console/usage?group=10000",
        "pipeline": "/console/g/10000/pipeline",
        "context analyzer": "/console/g/10000/context",
        "routing": "/console/g/10000/routing",
        "memory": "/console/g/10000/memory",
        "config": "/console/g/10000/config",
    }
    timings: dict[str, list[float]] = {name: [] for name in pages}
    transport = httpx.ASGITransport(app=app)
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
            await client.post("/console/login", data={"token": TOKEN})
            page = await client.get("/console/")
            assert re.search("data-group=", page.text), "groups page shows no group"
            for _ in range(rounds):
                for name, path in pages.items():
                    started = time.perf_counter()
                    response = await client.get(path)
                    timings[name].append((time.perf_counter() - started) * 1000)
                    assert response.status_code == 200, (path, response.status_code)
    finally:
        await runtime.stop()
    return timings


async def run(messages: int, groups: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory(prefix="pallas-console-bench-") as tmp:
        workdir = Path(tmp)
        db = workdir / "pallas.db"
        await migrate.upgrade(f"sqlite+aiosqlite:///{db}")
        seconds = load_rows(db, messages, groups)
        today = messages // DAYS
        print(
            f"loaded {messages:,} messages ({groups} groups, {DAYS} days, ~{today:,} today), "
            f"{30 * groups * 3:,} usage rows, 200 snapshots in {seconds:.1f}s"
        )
        for line in explain(db):
            print(line)
        timings = await measure(db, workdir, rounds)
    for name, values in timings.items():
        print(describe(name, values))
    worst = max(percentile(timings[n], 90) for n in timings if "aggregate" in n)
    print(f"aggregate pages p90 (worst): {worst:.1f} ms (target < 200 ms)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--groups", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args(argv or [])
    asyncio.run(run(args.messages, args.groups, args.rounds))


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
