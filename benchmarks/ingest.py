"""Ingest under a burst: Pallas against a bare NoneBot bot, same peer, same run.

Both bots are real processes on the FastAPI driver with the OneBot v11 adapter; the same OneBot
peer pushes `--messages` unaddressed group messages over `--groups` groups through the reverse
WebSocket as fast as the socket takes them.

- bare NoneBot: one async `on_message` handler that counts; a final sentinel message makes it
  call `send_group_msg`, and the time from the first frame to that call is its handling time.
- Pallas (`python bot.py`, the e2e harness config: dice off, so no unprompted reply muddies the
  count): handled = routed, counted from the `route {…}` lines its log writes per message. Right
  after the burst one member @s the bot; the time from that frame to the fake LLM receiving its
  request is the "@ under burst" latency.

Prints both rates, the ratio (the issue's target is ≥ 0.8×), the stored-message count, and the
@ latency over `--rounds` rounds (p50 / p99 with one round per value).

    python -m benchmarks.ingest [--messages 3000] [--groups 50] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from benchmarks.stats import describe
from tests.harness.bot_process import BotProcess
from tests.harness.fake_openai import FakeOpenAI, free_port
from tests.harness.onebot_peer import OneBotPeer

BOT_ID = 2_900_000_001
LINES = ["今天吃什么", "有人打活动吗", "哈哈哈哈", "新干员好强", "下班了", "周末去哪玩", "好困"]
SENTINEL = "__burst_done__"


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


async def _send_all(peer: OneBotPeer, events: list[dict]) -> None:
    for event in events:
        await peer.send_event(event)


async def bare_round(workdir: Path, messages: int, groups: int) -> float:
    """Seconds from the first frame until the bare bot handled the sentinel."""
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
    proc = subprocess.Popen(  # noqa: ASYNC220 - spawning returns at once
        [sys.executable, str(script)], cwd=workdir, env=env, stdout=log, stderr=subprocess.STDOUT
    )
    try:
        async with httpx.AsyncClient() as client:
            for _ in range(200):
                try:
                    await client.get(f"http://127.0.0.1:{port}/docs", timeout=0.5)
                    break
                except httpx.HTTPError:
                    await asyncio.sleep(0.1)
        peer = OneBotPeer(
            f"ws://127.0.0.1:{port}/onebot/v11/ws", self_id=BOT_ID, access_token="bench"
        )
        await peer.connect()
        await asyncio.sleep(0.5)
        events = _burst(peer, messages, groups)
        events.append(peer.group_message(70_000_001, 500_001, SENTINEL))
        started = time.monotonic()
        await _send_all(peer, events)
        await peer.wait_for_calls("send_group_msg", timeout=600)
        elapsed = time.monotonic() - started
        await peer.close()
        return elapsed
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _route_lines(log_path: Path) -> int:
    try:
        return log_path.read_text(errors="replace").count("pallas | route {")
    except FileNotFoundError:
        return 0


def _stored(db_path: Path) -> int:
    with sqlite3.connect(db_path) as db:
        return db.execute("SELECT count(*) FROM message WHERE is_bot = 0").fetchone()[0]


async def pallas_round(workdir: Path, messages: int, groups: int) -> dict[str, float]:
    fake = FakeOpenAI(default_reply="在的")
    await fake.start()
    bot = BotProcess(workdir, env_overrides={"OPENAI_BASE_URL": fake.base_url})
    await bot.start()
    try:
        peer = OneBotPeer(bot.ws_url, self_id=BOT_ID, access_token=bot.access_token)
        await peer.connect()
        await asyncio.sleep(0.5)
        before = _route_lines(bot.log_path)
        events = _burst(peer, messages, groups)
        started = time.monotonic()
        await _send_all(peer, events)
        at_sent = time.monotonic()
        await peer.send_event(peer.group_message(70_000_001, 600_001, at_bot("在吗？")))
        await fake.wait_for_requests(1, timeout=600)
        at_latency = time.monotonic() - at_sent
        while _route_lines(bot.log_path) - before < messages + 1:
            await asyncio.sleep(0.05)
        routed = time.monotonic() - started
        await asyncio.sleep(1.0)  # the durable writer commits within ~100 ms
        stored = _stored(bot.db_path)
        await peer.close()
        return {"routed_s": routed, "at_latency_s": at_latency, "stored": stored}
    finally:
        await bot.stop()
        await fake.stop()


async def run(messages: int, groups: int, rounds: int) -> None:
    bare: list[float] = []
    pallas: list[dict[str, float]] = []
    for n in range(rounds):  # interleaved, so both see the same machine load
        with tempfile.TemporaryDirectory() as tmp:
            bare.append(await bare_round(Path(tmp), messages, groups))
        with tempfile.TemporaryDirectory() as tmp:
            pallas.append(await pallas_round(Path(tmp), messages, groups))
        print(
            f"round {n + 1}: bare {messages / bare[-1]:.0f} msg/s · pallas "
            f"{(messages + 1) / pallas[-1]['routed_s']:.0f} msg/s · @ latency "
            f"{pallas[-1]['at_latency_s'] * 1000:.0f} ms · stored {pallas[-1]['stored']:.0f}"
        )
    bare_rate = sorted(messages / s for s in bare)[len(bare) // 2]
    pallas_rate = sorted((messages + 1) / p["routed_s"] for p in pallas)[len(pallas) // 2]
    print(f"\n{messages} unaddressed messages over {groups} groups, {rounds} rounds (median)")
    print(f"  bare NoneBot (one on_message handler)  {bare_rate:8.0f} msg/s handled")
    print(f"  Pallas (python bot.py)                  {pallas_rate:8.0f} msg/s routed")
    print(f"  ratio Pallas / bare                     {pallas_rate / bare_rate:8.2f}x")
    print(
        describe(
            "  @ right after the burst → LLM request", [p["at_latency_s"] * 1000 for p in pallas]
        )
    )
    print(f"  stored (of {messages + 1} member messages): {[int(p['stored']) for p in pallas]}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--messages", type=int, default=3000)
    parser.add_argument("--groups", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv or [])
    asyncio.run(run(args.messages, args.groups, args.rounds))


if __name__ == "__main__":
    main(sys.argv[1:])
