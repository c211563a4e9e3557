"""The bot's memory footprint with 1,000 active groups over a 1,000,000-message database.

Fills a SQLite database with `--messages` group messages (the reply benchmark's shape: a hot
group with a fifth of them, 999 other groups share the rest), starts the real bot process
(`python bot.py`, the e2e harness config) on it, and drives it through the real OneBot v11 peer
over the WebSocket: `--per-group` lines in each of the 1,000 groups, then an @ in every 20th
group (a full reply turn: warm timeline and session windows, context, the fake LLM, delivery).
Prints the process's RSS (VmRSS: anonymous / file-backed, the main heap vs anonymous mmaps),
peak (VmHWM) and threads from /proc after start-up, after the background warm-ups, after the
lines, after the @ turns and idle 12 s later; the issue's target is < 300 MB. First it times
start-up to listening (spawn → the port accepts a connection; wall and CPU seconds) on an
empty database, `--startup-runs` times; the issue's target is < 3 s.

    python -m benchmarks.footprint [--messages 1000000] [--per-group 3] [--reuse-db FILE]
    python -m benchmarks.footprint --repo /other/checkout   # the same, that checkout's bot.py
    PALLAS_TRACEMALLOC=/tmp/tm python -m benchmarks.footprint   # + tracemalloc snapshot of
                                                                 # the traffic: /tmp/tm.1
    PALLAS_SENTENCE_ENCODER=local python -m benchmarks.footprint  # with the local encoder (the
                                                   # deployment default; the harness turns it off)
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.reply_turn import BOT, GROUP, OTHER_GROUPS, fill_messages
from pallas.core.db import migrate
from pallas.core.db.engine import create_engine
from tests.harness import bot_process
from tests.harness.bot_process import REPO, BotProcess
from tests.harness.fake_openai import FakeOpenAI
from tests.harness.onebot_peer import OneBotPeer

LINES = ["今天吃什么", "有人打活动吗", "哈哈哈哈", "新干员好强", "下班了", "周末去哪玩", "好困"]


def memory_of(pid: int) -> dict[str, float]:
    """VmRSS / VmHWM of a process, in MB."""
    out: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
            out[key] = int(value.split()[0]) / 1024
        elif key == "Threads":
            out[key] = int(value)
    return out


def anon_regions(pid: int) -> dict[str, float]:
    """Anonymous RSS in MB: the main `[heap]` (brk) and the anonymous mmaps (Python's object
    arenas, other threads' malloc arenas and large blocks; the kernel merges adjacent ones, so
    they are not told apart here)."""
    out = {"[heap]": 0.0, "anonymous mmaps": 0.0}
    kind: str | None = None
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        head = line.split()
        if not head[0].endswith(":"):  # a mapping's header line
            name = head[5] if len(head) > 5 else ""
            kind = "[heap]" if name == "[heap]" else (None if name else "anonymous mmaps")
        elif kind and head[0] == "Rss:":
            out[kind] += int(head[1]) / 1024
    return out


def _print(label: str, pid: int) -> None:
    mem = memory_of(pid)
    print(
        f"{label:<28} RSS {mem['VmRSS']:6.1f} MB (anon {mem['RssAnon']:6.1f}, "
        f"files {mem['RssFile']:5.1f})   peak {mem['VmHWM']:6.1f} MB   "
        f"threads {mem['Threads']:.0f}",
        flush=True,
    )
    regions = anon_regions(pid)
    print("    anon: " + ", ".join(f"{k} {v:.1f}" for k, v in regions.items()), flush=True)


async def _await_warmups(bot: BotProcess, timeout: float = 60.0) -> float:
    started = time.monotonic()
    while "warm-ups done" not in bot.log_text():
        if time.monotonic() - started > timeout:
            raise TimeoutError("warm-ups did not finish")
        await asyncio.sleep(0.1)
    return time.monotonic() - started


async def _fill(bot: BotProcess, messages: int) -> None:
    bot.prepare()
    await migrate.upgrade(bot.database_url)
    engine = create_engine(bot.database_url)
    try:
        started = time.perf_counter()
        await fill_messages(engine, messages, time.time())
        print(f"stored {messages} messages in {time.perf_counter() - started:.1f}s", flush=True)
    finally:
        await engine.dispose()


async def _traffic(peer: OneBotPeer, fake: FakeOpenAI, per_group: int, pid: int) -> None:
    groups = [GROUP + i for i in range(OTHER_GROUPS + 1)]
    sent = 0
    for round_ in range(per_group):
        for n, group in enumerate(groups):
            text = f"{LINES[(n + round_) % len(LINES)]}{n}"
            await peer.send_event(peer.group_message(group, 600_000 + n % 50, text))
            sent += 1
    await asyncio.sleep(3.0)  # the lines' ingest (recording, warm windows) settles
    _print(f"after {sent:,} lines", pid)
    addressed = groups[::20]
    for n, group in enumerate(addressed):
        at = [{"type": "at", "data": {"qq": str(BOT)}}, {"type": "text", "data": {"text": " 在吗"}}]
        await peer.send_event(peer.group_message(group, 610_000 + n, at))
    await fake.wait_for_requests(len(addressed), timeout=300)
    print(f"sent {sent} lines over {len(groups)} groups and {len(addressed)} @s", flush=True)


def _snapshot(pid: int) -> None:
    """With PALLAS_TRACEMALLOC set: the first call starts tracing in the bot, later ones dump."""
    if os.environ.get("PALLAS_TRACEMALLOC"):
        os.kill(pid, signal.SIGUSR2)


async def _fill_or_reuse(bot: BotProcess, messages: int, reuse: Path | None, exists: bool) -> None:
    if reuse is not None and exists:
        bot.prepare()
        shutil.copyfile(reuse, bot.db_path)
        print(f"reused {reuse}", flush=True)
        return
    await _fill(bot, messages)
    if reuse is not None:
        shutil.copyfile(bot.db_path, reuse)


async def run(messages: int, per_group: int, reuse: Path | None = None) -> None:
    with tempfile.TemporaryDirectory(prefix="pallas-footprint-") as tmp:
        fake = FakeOpenAI(default_reply="在的")
        await fake.start()
        env = {"OPENAI_BASE_URL": fake.base_url}
        env.update(
            {
                k: v
                for k, v in os.environ.items()
                if k.startswith(("PALLAS_TRACEMALLOC", "PALLAS_SENTENCE"))
            }
        )
        bot = BotProcess(Path(tmp), env_overrides=env)
        await _fill_or_reuse(bot, messages, reuse, reuse is not None and reuse.exists())  # noqa: ASYNC240
        started = time.monotonic()
        await bot.start(timeout=120)
        print(f"bot listening after {time.monotonic() - started:.1f}s", flush=True)
        try:
            assert bot.proc is not None
            pid = bot.proc.pid
            _print("after start-up", pid)
            waited = await _await_warmups(bot)
            _print(f"after warm-ups (+{waited:.1f}s)", pid)
            _snapshot(pid)
            peer = OneBotPeer(bot.ws_url, self_id=BOT, access_token=bot.access_token)
            await peer.connect()
            await asyncio.sleep(0.5)
            try:
                await _traffic(peer, fake, per_group, pid)
            except TimeoutError:
                print(bot.tail_log(20), flush=True)
                raise
            await asyncio.sleep(2.0)  # background work of the turns
            _print("after 50 @ turns", pid)
            await asyncio.sleep(12.0)  # idle: background turn work done, a periodic trim ran
            _print("idle 12 s later", pid)
            _snapshot(pid)
            await asyncio.sleep(1.0)
            await peer.close()
        finally:
            await bot.stop()
            await fake.stop()


def _port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.05):
            return True
    except OSError:
        return False


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (steadier than wall time on a busy machine)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def startup_seconds(workdir: Path, repo: Path) -> tuple[float, float]:
    """Spawn `python bot.py` (the e2e config, an empty migrated database) and time it until its
    port accepts a connection: (wall seconds, CPU seconds); the bot is stopped afterwards."""
    bot = BotProcess(workdir)
    bot.prepare()
    asyncio.run(migrate.upgrade(bot.database_url))
    with bot.log_path.open("ab") as log:
        started = time.monotonic()
        proc = subprocess.Popen(
            [sys.executable, str(repo / "bot.py")],
            cwd=repo,
            env=bot.environment(),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            while not _port_open(bot.port):
                if proc.poll() is not None or time.monotonic() - started > 60:
                    raise RuntimeError(f"bot did not start:\n{bot.tail_log()}")
                time.sleep(0.01)
            return time.monotonic() - started, cpu_seconds(proc.pid)
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()


def startup(runs: int, repo: Path) -> None:
    times = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="pallas-startup-") as tmp:
            times.append(startup_seconds(Path(tmp), repo))
    load = os.getloadavg()
    print(
        f"start-up to listening ({repo.name}): "
        + ", ".join(f"{wall:.2f}s (cpu {cpu:.2f}s)" for wall, cpu in times)
        + f"   load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}",
        flush=True,
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--per-group", type=int, default=3)
    parser.add_argument(
        "--reuse-db",
        type=Path,
        help="copy the filled database from this file if it exists, else save it there",
    )
    parser.add_argument(
        "--startup-runs", type=int, default=2, help="time start-up to listening this often"
    )
    parser.add_argument(
        "--repo", type=Path, default=REPO, help="checkout whose bot.py and config/ are measured"
    )
    parser.add_argument("--startup-only", action="store_true")
    args = parser.parse_args(argv or [])
    bot_process.REPO = args.repo  # the bot (bot.py, config/) of the checkout under test
    if args.startup_runs:
        startup(args.startup_runs, args.repo)
    if not args.startup_only:
        asyncio.run(run(args.messages, args.per_group, args.reuse_db))


if __name__ == "__main__":
    main(sys.argv[1:])
