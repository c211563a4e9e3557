"""A soak: simulated days of a busy deployment on a fast clock, printed hour by hour.

The real `ChatTurnService` in-process over SQLite (WAL), a fake clock, and the fake
OpenAI-compatible server in a process of its own (`benchmarks.llm_process`). Every simulated
hour `--groups` groups send `--per-group` messages each (a few percent of them @ the bot, who
answers through the whole reply path), the bot is restarted at hours 12 and 36 (its state
store, caches and connections rebuilt over the same database), and the retention job runs at
the end of each hour as the `retention` plugin would. Per hour it prints: messages so far, RSS
of this process, the database's size, @ turn time p50 / p99 (the model's latency subtracted),
and event-loop lag p99 / max (a 5 ms ticker's overshoot).

Run it twice to compare retention (`--keep-days 1`: messages, sessions and snapshots older
than a day are pruned) with none (`--keep-days 0`); the last line prints the database size per
million messages stored.

    python -m benchmarks.soak [--hours 48] [--groups 200] [--per-group 25] [--keep-days 1]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.llm_process import REPO, LLMProcess
from benchmarks.reply_turn import LINES, RecordingSender
from benchmarks.stats import percentile
from pallas.app import build_app
from pallas.core.clock import FakeClock
from pallas.core.db.retention import database_facts
from pallas.core.settings import PallasSettings
from pallas.core.state import MemoryStateStore
from pallas.core.turn import Segment, Sender, TurnInput
from pallas.features.retention import RetentionConfig, RetentionJob
from pallas.onebot.convert import stored_message_from_turn
from pallas.runtime import PallasRuntime
from pallas.turn.service import ChatTurnService

BOT = 2_900_000_001
FIRST_GROUP = 880_000_001
START = 1_764_849_600.0  # 2025-12-04 20:00 (UTC+8)
HOUR_S = 3600.0
RESTART_HOURS = (12, 36)
ADDRESSED_SHARE = 0.02


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


class LoopLag:
    """A ticker that sleeps 5 ms at a time and records how late it wakes."""

    def __init__(self) -> None:
        self.lags: list[float] = []
        self._task: asyncio.Task[None] | None = None

    async def _tick(self) -> None:
        while True:
            started = time.perf_counter()
            await asyncio.sleep(0.005)
            self.lags.append((time.perf_counter() - started - 0.005) * 1000)

    def start(self) -> None:
        self._task = asyncio.create_task(self._tick())

    def take(self) -> list[float]:
        out, self.lags = self.lags, []
        return out

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)


@dataclass
class Hour:
    hour: int
    messages: int
    rss_mb: float
    db_mb: float
    at_ms: list[float] = field(default_factory=list)
    lag_ms: list[float] = field(default_factory=list)
    pruned: int = 0

    def line(self) -> str:
        at50, at99 = percentile(self.at_ms, 50), percentile(self.at_ms, 99)
        lag99 = percentile(self.lag_ms, 99)
        return (
            f"hour {self.hour:>3}: {self.messages:>8} messages, RSS {self.rss_mb:7.1f} MB, "
            f"db {self.db_mb:7.1f} MB, @ p50 {at50:6.1f} ms p99 {at99:6.1f} ms "
            f"({len(self.at_ms)} replies), loop lag p99 {lag99:5.1f} ms max "
            f"{max(self.lag_ms, default=0):6.1f} ms, pruned {self.pruned}"
        )


class Soak:
    def __init__(self, args: argparse.Namespace, workdir: Path, llm_url: str) -> None:
        self.args = args
        self.clock = FakeClock(START)
        self.rng = random.Random(11)
        self.settings = PallasSettings(
            database_url=f"sqlite+aiosqlite:///{workdir / 'soak.db'}",
            pallas_config_dir=workdir / "config",
            pallas_data_dir=workdir,
            openai_base_url=llm_url,
            openai_api_key="sk-soak",
        )
        days = args.keep_days
        self.rule = RetentionConfig(messages_days=days, sessions_days=days, snapshots_days=days)
        self.mid = 0
        self.stored = 0

    async def start(self) -> tuple[PallasRuntime, ChatTurnService, RetentionJob]:
        state = MemoryStateStore(self.clock)
        runtime = await PallasRuntime.start(
            self.settings, clock=self.clock, state=state, nicknames=("帕拉斯",)
        )

        async def no_sleep(_: float) -> None:
            return None

        service = build_app(runtime, rng=random.Random(1), sleep=no_sleep).chat
        job = RetentionJob(runtime.sessions, self.clock, scopes=runtime.repos.messages.groups,
                           config_of=lambda _: self.rule, max_rows=200_000)  # fmt: skip
        return runtime, service, job

    def _turn(self, group: int, addressed: bool) -> TurnInput:
        self.mid += 1
        user = 10_000 + self.rng.randrange(30)
        line = self.rng.choice(LINES)
        return TurnInput(
            bot_id=BOT, group_id=group, user_id=user, message_id=self.mid,
            time=self.clock.now(), text=f"帕拉斯，{line}？" if addressed else line,
            segments=(Segment("at", {"qq": str(BOT)}),) if addressed else (),
            sender=Sender(user, card=f"群友{user % 100}"),
            mentions=(BOT,) if addressed else (), to_me=addressed,
        )  # fmt: skip

    async def hour(
        self, n: int, runtime: PallasRuntime, service: ChatTurnService, job: RetentionJob
    ) -> Hour:
        args = self.args
        total = args.groups * args.per_group
        step = HOUR_S / total
        sender = RecordingSender(runtime)
        at_ms: list[float] = []
        for _ in range(total):
            self.clock.advance(step)
            group = FIRST_GROUP + self.rng.randrange(args.groups)
            addressed = self.rng.random() < ADDRESSED_SHARE
            turn = self._turn(group, addressed)
            runtime.writer.submit(stored_message_from_turn(turn))
            self.stored += 1
            started = time.perf_counter()
            outcome = await service.handle(turn, sender)
            if addressed and outcome.turn_id is not None:
                snap = await runtime.repos.snapshots.by_turn(outcome.turn_id)
                latency = float((snap.data.get("usage") or {}).get("latency_ms", 0)) if snap else 0
                at_ms.append((time.perf_counter() - started) * 1000 - latency)
        await service.drain_background()
        await runtime.writer.flush()
        report = await job.run()
        facts = await database_facts(runtime.sessions)
        return Hour(n, self.stored, rss_mb(), (facts.size_bytes or 0) / 1_048_576, at_ms,
                    pruned=report.total)  # fmt: skip


async def run(args: argparse.Namespace) -> None:
    workdir = Path(tempfile.mkdtemp(prefix="pallas-soak-"))
    shutil.copytree(REPO / "config", workdir / "config")  # the shipped persona and defaults
    try:
        async with LLMProcess(reply="好呀\n我也这么想") as llm:
            soak = Soak(args, workdir, llm.base_url)
            runtime, service, job = await soak.start()
            lag = LoopLag()
            lag.start()
            hours: list[Hour] = []
            try:
                for n in range(1, args.hours + 1):
                    if n in RESTART_HOURS:
                        await runtime.stop()
                        runtime, service, job = await soak.start()
                    hour = await soak.hour(n, runtime, service, job)
                    hour.lag_ms = lag.take()
                    hours.append(hour)
                    print(hour.line(), flush=True)
                messages = await runtime.repos.messages.count()
            finally:
                await lag.stop()
                await runtime.stop()
        _summary(args, hours, messages)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _summary(args: argparse.Namespace, hours: list[Hour], kept: int) -> None:
    warm = hours[min(len(hours) - 1, 2)]
    last = hours[-1]
    print(f"after warm-up (hour {warm.hour}) → last hour: RSS {warm.rss_mb:.1f} → "
          f"{last.rss_mb:.1f} MB ({(last.rss_mb / warm.rss_mb - 1) * 100:+.1f} %)")  # fmt: skip
    rule = f"retention {args.keep_days} day(s)" if args.keep_days else "no retention"
    per_million = last.db_mb / (last.messages / 1_000_000) if last.messages else 0.0
    print(f"{rule}: {last.messages} member messages received, {kept} rows in the message table"
          f" (the bot's own lines included), database {last.db_mb:.1f} MB"
          f" = {per_million:.0f} MB per million messages received")  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--hours", type=int, default=48)
    parser.add_argument("--groups", type=int, default=200)
    parser.add_argument("--per-group", type=int, default=25)
    parser.add_argument("--keep-days", type=int, default=1)
    asyncio.run(run(parser.parse_args(argv or [])))


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
