"""Ingest under a burst: Pallas against a bare NoneBot bot, same peer, same run.

Both bots are real processes on the FastAPI driver with the OneBot v11 adapter; the same OneBot
peer pushes `--messages` unaddressed group messages over `--groups` groups through the reverse
WebSocket as fast as the socket takes them.

- bare NoneBot: one async `on_message` handler that counts; a final sentinel message makes it
  call `send_group_msg`, and the time from the first frame to that call is its handling time.
- Pallas (`python bot.py`, the e2e harness config: dice off, so no unprompted reply muddies the
  count): `--ats` members @ the bot at points spread evenly through the burst, each in its own
  group (`sent → LLM` includes the frames queued ahead of it on the one WebSocket; `read →
  LLM` starts when the bot read it: its log line `addressed message … read at`).
  Handled = routed, read from the bot's periodic `counters:` line
  (`PALLAS_COUNTERS_INTERVAL_S=0.2`): the time from the first frame until the last turn that
  sent nothing finished routing. For each @, the time from its frame to the fake LLM receiving
  its request is the "@ under burst" latency; every @ must be answered exactly once (sends
  counted per group) and every member message stored.
- warm by default: before the burst every group gets one line, routed before the burst starts,
  and the burst waits until the bot's background group warm-up has loaded those groups (its
  log line `group warm-up: N groups warmed`), then 0.3 s: a running bot has seen its groups
  and their per-group caches are loaded. (Until this round the burst started after a fixed
  1 s, when only the first ~20 groups were loaded: the others' @s paid their own loads.)
  `--cold` skips that: the burst is then the first traffic of every group after a restart.
- start-up: process spawn → the port accepts connections (uvicorn serves after NoneBot's
  start-up hooks), for both processes. Pallas's warm-ups (jieba, BPE) finish in the background
  after that; the burst starts once its log says "warm-ups done".

Each round runs three bursts back to back: the bare bot, Pallas on the unaddressed burst alone
(the rate the issue's ≥ 0.8× target is about), and Pallas on the same burst with the `--ats`
@s in it (their turns' local work is on the same loop, so that rate is printed too, with its
ratio). Prints the median rates, both ratios (each round's own ratio — its three bursts ran
minutes apart, so the machine's drift between rounds cancels — and their median), the @
latency p50/p99 over all rounds, the answers per @, the stored-message count and the start-up
times.

    python -m benchmarks.ingest [--messages 3000] [--groups 50] [--ats 20] [--rounds 2]
                                [--cold] [--profile /tmp/pallas.pstats]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median
from typing import Any

from benchmarks.stats import describe
from tests.harness.bot_process import BotProcess
from tests.harness.fake_openai import FakeOpenAI, free_port
from tests.harness.onebot_peer import OneBotPeer

BOT_ID = 2_900_000_001
LINES = ["今天吃什么", "有人打活动吗", "哈哈哈哈", "新干员好强", "下班了", "周末去哪玩", "好困"]
SENTINEL = "__burst_done__"
AT_TEXT = "在吗？问题{n}号"
# what an @ member taught before the burst (`--at-facts`)
AT_FACTS = ("记住我在杭州上班", "记住我养了一只橘猫", "记住我周末常去爬山", "记住我不吃香菜",
            "记住我在学日语")  # fmt: skip
TAUGHT_SETTLE_S = 1.0
READ_AT = re.compile(r"addressed message (-?\d+) \(\w+\): priority lane, read at ([\d.]+)")
WARM_SETTLE_S = 0.3
WARMED = re.compile(r"group warm-up: (\d+) groups warmed")
ENCODER_FAILED = re.compile(r"sentence encoder process \(pid \d+\) failed")
COUNTERS = re.compile(r"counters: in (\d+).*?routed (\d+).*?last quiet turn at ([\d.]+)")


def at_bot(text: str) -> list[dict]:
    return [
        {"type": "at", "data": {"qq": str(BOT_ID)}},
        {"type": "text", "data": {"text": " " + text}},
    ]


BARE_BOT = f'''
import nonebot
from nonebot import on_message
from nonebot.adapters.onebot.v11 import Adapter, Bot, GroupMessageEvent

nonebot.init()
nonebot.get_driver().register_adapter(Adapter)
handled = 0
counter = on_message(priority=1, block=False)


@counter.handle()
async def count(bot: Bot, event: GroupMessageEvent) -> None:
    global handled
    handled += 1
    if event.get_plaintext() == "{SENTINEL}":
        await bot.send_group_msg(group_id=event.group_id, message=f"handled {{handled}}")


nonebot.run()
'''


def _burst(peer: OneBotPeer, messages: int, groups: int) -> list[dict]:
    return [
        peer.group_message(70_000_001 + i % groups, 500_000 + i % 97, f"{LINES[i % len(LINES)]}{i}")
        for i in range(messages)
    ]


async def _send_all(peer: OneBotPeer, events: list[dict], sent_at: dict[int, float]) -> None:
    for event in events:
        sent_at[id(event)] = time.monotonic()
        await peer.send_event(event)


async def _listening(port: int, spawned: float, timeout: float = 60.0) -> float:
    """Seconds from `spawned` until 127.0.0.1:`port` accepts a TCP connection."""
    while time.monotonic() - spawned < timeout:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.05):
                return time.monotonic() - spawned
        except OSError:
            await asyncio.sleep(0.01)
    raise TimeoutError(f"nothing listening on port {port}")


async def bare_round(workdir: Path, messages: int, groups: int) -> dict[str, float]:
    """Seconds from the first frame until the bare bot handled the sentinel; its start-up."""
    script = workdir / "bare_bot.py"
    script.write_text(BARE_BOT, encoding="utf-8")
    port = free_port()
    env = {
        **os.environ,
        "DRIVER": "~fastapi",
        "HOST": "127.0.0.1",
        "PORT": str(port),
        "ONEBOT_ACCESS_TOKEN": "bench",
        "LOG_LEVEL": "INFO",
    }
    log = (workdir / "bare.log").open("ab")
    spawned = time.monotonic()
    proc = subprocess.Popen(  # noqa: ASYNC220 - spawning returns at once
        [sys.executable, str(script)], cwd=workdir, env=env, stdout=log, stderr=subprocess.STDOUT
    )
    try:
        startup = await _listening(port, spawned)
        peer = OneBotPeer(
            f"ws://127.0.0.1:{port}/onebot/v11/ws", self_id=BOT_ID, access_token="bench"
        )
        await peer.connect()
        await asyncio.sleep(0.5)
        events = _burst(peer, messages, groups)
        events.append(peer.group_message(70_000_001, 500_001, SENTINEL))
        started = time.monotonic()
        await _send_all(peer, events, {})
        await peer.wait_for_calls("send_group_msg", timeout=600)
        elapsed = time.monotonic() - started
        await peer.close()
        return {"handled_s": elapsed, "startup_s": startup}
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _counters(log_path: Path) -> tuple[int, int, float]:
    """(in, routed, last quiet turn at) from the bot's latest `counters:` line."""
    try:
        found = COUNTERS.findall(log_path.read_text(errors="replace"))
    except FileNotFoundError:
        return 0, 0, 0.0
    if not found:
        return 0, 0, 0.0
    messages, routed, quiet_at = found[-1]
    return int(messages), int(routed), float(quiet_at)


def _stored(db_path: Path) -> int:
    with sqlite3.connect(db_path) as db:
        return db.execute("SELECT count(*) FROM message WHERE is_bot = 0").fetchone()[0]


def _at_snapshots(db_path: Path) -> list[dict[str, Any]]:
    """The @s' injection snapshots: each one's `stage_ms` (with each context source's, as
    `source <name>`) and `merge_wait` (what the reply step's local work cost and whether the
    merge window was waited)."""
    import json

    with sqlite3.connect(db_path) as db:
        rows = db.execute("SELECT data FROM injection_snapshot WHERE user_id >= 600001").fetchall()
    out = []
    for (data,) in rows:
        parsed = json.loads(data) if isinstance(data, str) else data
        sources = (parsed.get("retrieval") or {}).get("stage_ms") or {}
        stages = {
            **(parsed.get("stage_ms") or {}),
            **{f"source {k}": v for k, v in sources.items()},
        }
        out.append({"stage_ms": stages, "merge_wait": parsed.get("merge_wait")})
    return out


def _at_member(n: int, ats: int, groups: int) -> tuple[int, int]:
    """The group and member of the burst's `n`th @."""
    return 70_000_001 + (n * groups // max(ats, 1)) % groups, 600_001 + n


def _with_ats(peer: OneBotPeer, burst: list[dict], ats: int, groups: int) -> list[dict]:
    """`ats` @s spread evenly through the burst, each from its own member in its own group."""
    events = list(burst)
    for n in reversed(range(ats)):
        position = (n + 1) * len(burst) // (ats + 1)
        group, member = _at_member(n, ats, groups)
        at = peer.group_message(group, member, at_bot(AT_TEXT.format(n=n)))
        events.insert(position, at)
    return events


async def _teach_at_members(
    peer: OneBotPeer, bot: BotProcess, ats: int, groups: int, facts: int
) -> int:
    """`--at-facts`: before the burst each @ member teaches the bot `facts` facts about
    themselves (记住…, answered), so their @ in the burst has memory to compare its question
    with: it is encoded, by the encoder's process, while the burst goes on. The lines sent."""
    sent = 0
    for n in range(ats):
        group, member = _at_member(n, ats, groups)
        for text in AT_FACTS[:facts]:
            await peer.send_event(peer.group_message(group, member, at_bot(text)))
            sent += 1
    deadline = time.monotonic() + 60
    while len(peer.sends()) < sent and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    taught = len(peer.sends())
    print(f"  {taught} of {sent} teachings answered before the burst")
    await asyncio.sleep(TAUGHT_SETTLE_S)  # the facts' vectors are made in the background
    return sent


def _at_latencies(
    fake: FakeOpenAI, ats: list[dict], sent_at: dict[int, float], read_at: dict[int, float]
) -> tuple[list[float], list[float]]:
    """Per @: seconds from its frame being sent (by the peer) / read (by the bot, its log's
    `addressed message … read at`) to the first LLM request that carries its text."""
    from_sent, from_read = [], []
    for n, event in enumerate(ats):
        marker = AT_TEXT.format(n=n)
        hits = [r.at for r in fake.chat_requests() if marker in str(r.messages[-1:])]
        if hits:
            from_sent.append(min(hits) - sent_at[id(event)])
            if event["message_id"] in read_at:
                from_read.append(min(hits) - read_at[event["message_id"]])
    return from_sent, from_read


async def _group_warmups_done(bot: BotProcess, groups: int, timeout: float = 60.0) -> None:
    """Wait for the bot's background group warm-up to have loaded the groups just seen (its
    log line `group warm-up: N groups warmed`); a burst during it pays for the loads too."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if sum(int(n) for n in WARMED.findall(bot.log_text())) >= groups:
            return
        await asyncio.sleep(0.05)
    print(f"  (no 'group warm-up: … groups warmed' line for {groups} groups in {timeout:.0f} s)")


def _read_at(log_path: Path) -> dict[int, float]:
    text = log_path.read_text(errors="replace")
    return {int(mid): float(at) for mid, at in READ_AT.findall(text)}


async def pallas_round(
    workdir: Path,
    messages: int,
    groups: int,
    ats: int,
    profile: str = "",
    cold: bool = False,
    at_facts: int = 0,
) -> dict[str, Any]:
    fake = FakeOpenAI(default_reply="在的")
    await fake.start()
    env = {"OPENAI_BASE_URL": fake.base_url, "PALLAS_COUNTERS_INTERVAL_S": "0.2"}
    if profile:
        env["PALLAS_PROFILE"] = profile
    bot = BotProcess(workdir, env_overrides=env)
    spawned = time.monotonic()
    listening = asyncio.ensure_future(_listening(bot.port, spawned))
    await bot.start()
    startup = await listening
    try:
        peer = OneBotPeer(bot.ws_url, self_id=BOT_ID, access_token=bot.access_token)
        await peer.connect()
        await asyncio.sleep(0.5)
        while "warm-ups done" not in bot.log_text():  # a burst at start-up waits for them
            await asyncio.sleep(0.05)
        # with PALLAS_TEST_SENTENCE_ENCODER=local: a running bot has its encoder loaded
        while not re.search(r"sentence encoder (on|off)", bot.log_text()):
            await asyncio.sleep(0.05)
        warm = 0 if cold else groups
        if warm:  # a running bot has seen its groups: one line each, routed before the burst
            for g in range(groups):
                await peer.send_event(peer.group_message(70_000_001 + g, 400_000 + g, "早"))
            while _counters(bot.log_path)[1] < warm:
                await asyncio.sleep(0.05)
            await _group_warmups_done(bot, groups)
            await asyncio.sleep(WARM_SETTLE_S)
        taught = await _teach_at_members(peer, bot, ats, groups, at_facts) if at_facts else 0
        burst = _burst(peer, messages, groups)
        events = _with_ats(peer, burst, ats, groups)
        at_events = [e for e in events if e["user_id"] >= 600_001]
        at_events.sort(key=lambda e: e["user_id"])
        answered_before = {e["group_id"]: len(peer.sends(e["group_id"])) for e in at_events}
        sent_at: dict[int, float] = {}
        total = _counters(bot.log_path)[1] + messages + ats  # routed before the burst, too
        started = time.monotonic()
        await _send_all(peer, events, sent_at)
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            _, routed, quiet_at = _counters(bot.log_path)
            if routed >= total and len(fake.chat_requests()) >= ats:
                break
            await asyncio.sleep(0.1)
        if ats:
            await asyncio.sleep(6.0)  # late duplicates would show up here; bubbles are paced
        _, routed, quiet_at = _counters(bot.log_path)
        latencies, from_read = _at_latencies(fake, at_events, sent_at, _read_at(bot.log_path))
        answers = [len(peer.sends(e["group_id"])) - answered_before[e["group_id"]]
                   for e in at_events]  # fmt: skip
        stored = _stored(bot.db_path)
        log_text = bot.log_text()
        await peer.close()
        await bot.stop()  # write-behind snapshots are flushed at shutdown
        snapshots = _at_snapshots(bot.db_path)
        return {
            "routed_s": quiet_at - started,
            "routed": routed,
            "at_latencies_s": latencies,
            "at_from_read_s": from_read,
            "members": messages + ats + warm + taught,
            "answers": answers,
            "stored": stored,
            "startup_s": startup,
            "snapshots": snapshots,
            # with PALLAS_TEST_SENTENCE_ENCODER=local: loaded, and never lost in the run (a
            # worker stopped at its first encode once made every run rank by words only)
            "encoder_on": "sentence encoder on" in log_text,
            "encoder_failures": len(ENCODER_FAILED.findall(log_text)),
        }
    finally:
        await bot.stop()
        await fake.stop()


async def run(
    messages: int,
    groups: int,
    ats: int,
    rounds: int,
    profile: str = "",
    cold: bool = False,
    at_facts: int = 0,
) -> None:
    bare: list[dict[str, float]] = []
    plain: list[dict[str, Any]] = []  # the unaddressed burst alone: the ratio
    pallas: list[dict[str, Any]] = []  # the same burst with `ats` @s answered in it
    for n in range(rounds):  # interleaved, so all three see the same machine load
        with tempfile.TemporaryDirectory() as tmp:
            bare.append(await bare_round(Path(tmp), messages, groups))
        if ats:
            with tempfile.TemporaryDirectory() as tmp:
                plain.append(await pallas_round(Path(tmp), messages, groups, 0, "", cold))
        with tempfile.TemporaryDirectory() as tmp:
            pallas.append(
                await pallas_round(Path(tmp), messages, groups, ats, profile, cold, at_facts)
            )
        if not ats:
            plain.append(pallas[-1])
        p = pallas[-1]
        print(
            f"round {n + 1}: bare {messages / bare[-1]['handled_s']:.0f} msg/s · pallas "
            f"{messages / plain[-1]['routed_s']:.0f} msg/s, with {ats} @s "
            f"{(messages + ats) / p['routed_s']:.0f} msg/s · @ p99 "
            f"{max(p['at_latencies_s'], default=float('nan')) * 1000:.0f} ms · stored "
            f"{p['stored']} · routed {p['routed']} · load {os.getloadavg()[0]:.2f}"
        )
    bare_rates = [messages / b["handled_s"] for b in bare]
    plain_rates = [messages / p["routed_s"] for p in plain]
    pallas_rates = [(messages + ats) / p["routed_s"] for p in pallas]
    # each round's ratio pairs runs minutes apart: the machine's drift between rounds cancels
    plain_ratios = [p / b for p, b in zip(plain_rates, bare_rates, strict=True)]
    pallas_ratios = [p / b for p, b in zip(pallas_rates, bare_rates, strict=True)]
    print(f"\n{messages} unaddressed messages over {groups} groups (then again with {ats} @s,")
    who = f"who taught {at_facts} facts before it" if at_facts else "new"
    print(f"each from a member ({who}) in its own group, spread through it and answered);")
    state = "cold (first line of every group)" if cold else "warm (each group seen once before)"
    print(f"{rounds} rounds (median), Pallas {state}; load average {os.getloadavg()}")
    print(f"  bare NoneBot (one on_message handler)  {median(bare_rates):8.0f} msg/s handled")
    print(f"  Pallas (python bot.py)                  {median(plain_rates):8.0f} msg/s routed")
    print(f"  ratio Pallas / bare                     {_ratios(plain_ratios)}")
    print(f"  Pallas with the {ats} @s answered too    {median(pallas_rates):8.0f} msg/s routed")
    print(f"  ratio with the @s / bare                {_ratios(pallas_ratios)}")
    latencies = [s * 1000 for p in pallas for s in p["at_latencies_s"]]
    print(describe("  @ in the burst: sent → its LLM request", latencies))
    read = [s * 1000 for p in pallas for s in p["at_from_read_s"]]
    print(describe("  @ in the burst: read by the bot → its LLM request", read))
    snapshots = [s for p in pallas for s in p["snapshots"]]
    stages = sorted({k for s in snapshots for k in s["stage_ms"]})
    for stage in stages:
        values = [float(s["stage_ms"][stage]) for s in snapshots if stage in s["stage_ms"]]
        print(describe(f"  @ snapshot stage {stage}", values))
    waits = [str((s["merge_wait"] or {}).get("reason")) for s in snapshots]
    print(f"  @ merge-wait decisions: { {r: waits.count(r) for r in sorted(set(waits))} }")
    answers = [a for p in pallas for a in p["answers"]]
    print(
        f"  @s answered exactly once: {answers.count(1)} of {len(answers)} "
        f"(answers per @: {sorted(set(answers))}); LLM requests seen for "
        f"{len(latencies)} of {ats * rounds}"
    )
    print(f"  stored (of {pallas[0]['members']} member messages): {[p['stored'] for p in pallas]}")
    on = sum(p["encoder_on"] for p in pallas)
    failures = sum(p["encoder_failures"] for p in pallas)
    print(f"  sentence encoder on in {on} of {len(pallas)} @ rounds; its worker failed {failures}x")
    print(
        "  start-up to listening: bare "
        + ", ".join(f"{b['startup_s']:.2f}" for b in bare)
        + " s · Pallas "
        + ", ".join(f"{p['startup_s']:.2f}" for p in pallas)
        + " s"
    )


def _ratios(ratios: list[float]) -> str:
    """The median of the rounds' own ratios, then each round's."""
    rounds = ", ".join(f"{r:.2f}" for r in ratios)
    return f"{median(ratios):8.2f}x (median of the rounds: {rounds})"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--messages", type=int, default=3000)
    parser.add_argument("--groups", type=int, default=50)
    parser.add_argument("--ats", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--profile", default="", help="write the Pallas bot's cProfile stats here (PALLAS_PROFILE)"
    )
    parser.add_argument(
        "--cold", action="store_true", help="no warm-up line per group before the burst"
    )
    parser.add_argument(
        "--at-facts", type=int, default=0, choices=range(len(AT_FACTS) + 1),
        help="facts each @ member teaches before the burst (its question is then encoded)",
    )  # fmt: skip
    args = parser.parse_args(argv or [])
    args.profile = str(Path(args.profile).resolve()) if args.profile else ""
    asyncio.run(run(args.messages, args.groups, args.ats, args.rounds, args.profile, args.cold,
                    args.at_facts))  # fmt: skip


if __name__ == "__main__":
    main(sys.argv[1:])
