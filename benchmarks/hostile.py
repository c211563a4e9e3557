"""Hostile input through the real protocol: what 5,000 fuzzed events cost the operator's log.

A OneBot peer sends seeded mutations of every event kind (`tests/harness/event_fuzz.py`: wrong
types, missing fields, broken segments and CQ codes, odd unicode) to the real bot process,
with a well-formed message every 100 events. Prints the log's lines, warnings, errors and
tracebacks (with the distinct exceptions), whether every well-formed message was kept, the
bot's RSS, and the send rate.

    python -m benchmarks.hostile [--events 5000] [--seed 33] [--every 100]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import re
import shutil
import tempfile
import time
from pathlib import Path

from pallas.core.db.engine import create_engine, session_factory
from pallas.core.db.repositories.messages import MessageRepository
from tests.harness.bot_process import BotProcess
from tests.harness.event_fuzz import fuzzed_events
from tests.harness.fake_openai import FakeOpenAI
from tests.harness.onebot_peer import OneBotPeer

BOT, GROUP, MEMBER = 2_900_000_001, 62_000_001, 20_002
EXCEPTION_LINE = re.compile(r"^(\w+(?:\.\w+)*(?:Error|Exception|Exit)\b.*)$", re.MULTILINE)


async def _kept(bot: BotProcess, ids: list[int]) -> int:
    engine = create_engine(bot.database_url)
    try:
        repo = MessageRepository(session_factory(engine))
        return len(await repo.find_by_message_ids(BOT, GROUP, ids))
    finally:
        await engine.dispose()


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def run(events: int, seed: int, keep_log: Path | None = None, every: int = 100) -> None:
    workdir = Path(tempfile.mkdtemp(prefix="pallas-bench-hostile-"))
    llm = FakeOpenAI(default_reply="好呀")
    await llm.start()
    bot = BotProcess(workdir, env_overrides={"OPENAI_BASE_URL": llm.base_url})
    await bot.start()
    peer = OneBotPeer(bot.ws_url, self_id=BOT, access_token=bot.access_token)
    await peer.connect()
    good: list[int] = []
    try:
        started = time.perf_counter()
        for i, event in enumerate(fuzzed_events(seed, events, self_id=BOT, group_id=GROUP)):
            await peer.send_event(event)
            if i % every == 0:
                good.append(960_000 + i)
                normal = peer.group_message(GROUP, MEMBER, f"正常{i}", message_id=good[-1])
                await peer.send_event(normal)
        sent_s = time.perf_counter() - started
        kept = await _kept(bot, good)
        for _ in range(300):  # until every normal line is stored, 30 s at most
            if kept == len(good):
                break
            await asyncio.sleep(0.1)
            kept = await _kept(bot, good)
        drained_s = time.perf_counter() - started - sent_s
        await asyncio.sleep(3.0)  # the last handlers finish and log
        alive = bot.proc is not None and bot.proc.poll() is None
        rss = _rss_mb(bot.proc.pid) if alive and bot.proc is not None else 0.0
        print(f"normal lines stored {drained_s:.1f} s after the last send")
        log = bot.log_path.read_text(encoding="utf-8")
        _report(log, events, sent_s, kept, len(good))
        if keep_log is not None:
            await asyncio.to_thread(keep_log.write_text, log, encoding="utf-8")
        print(f"bot alive: {alive}; RSS {rss:.0f} MB")
    finally:
        await peer.close()
        await bot.stop()
        await llm.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def _report(log: str, events: int, sent_s: float, kept: int, good: int) -> None:
    lines = log.splitlines()
    levels = collections.Counter(
        level for line in lines for level in ("WARNING", "ERROR") if f"[{level}]" in line
    )
    tracebacks = log.count("Traceback")
    kinds = collections.Counter(m.split(":")[0] for m in EXCEPTION_LINE.findall(log))
    print(f"{events} fuzzed events sent in {sent_s:.1f} s ({events / sent_s:.0f}/s)")
    print(f"log: {len(lines)} lines, {levels['WARNING']} warnings, {levels['ERROR']} errors, "
          f"{tracebacks} tracebacks")  # fmt: skip
    for kind, n in kinds.most_common(10):
        print(f"  {n:5d} × {kind}")
    print(f"well-formed messages kept: {kept}/{good}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=5_000)
    parser.add_argument("--seed", type=int, default=33)
    parser.add_argument("--keep-log", type=Path, help="write the bot's log here")
    parser.add_argument("--every", type=int, default=100, help="a normal message every N events")
    args = parser.parse_args(argv)
    asyncio.run(run(args.events, args.seed, args.keep_log, args.every))


if __name__ == "__main__":
    main()
