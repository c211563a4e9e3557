"""Local time per REPLY turn, everything except the LLM call, with 100k messages stored.

Runs the real `ChatTurnService` in-process: SQLite (WAL) with 100,000 group messages, the real
routing, context pipeline, budget (real BPE), delivery to an in-memory sender, session append
and snapshot storage; the LLM is the fake OpenAI-compatible server on 127.0.0.1 and its
latency is subtracted. Prints p50/p90/p99 per stage.

    python -m benchmarks.reply_turn [--messages 100000] [--turns 200]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import tempfile
import time
from pathlib import Path

from benchmarks.stats import describe
from pallas.app import build_app
from pallas.core.records import StoredMessage
from pallas.core.settings import PallasSettings
from pallas.core.turn import Segment, Sender, TurnInput
from pallas.runtime import PallasRuntime
from tests.harness.fake_openai import FakeOpenAI

BOT, GROUP = 2_900_000_001, 777_000_001
REPO = Path(__file__).resolve().parents[1]
LINES = [
    "今天吃什么",
    "有人打活动吗",
    "哈哈哈哈",
    "这个版本的新干员好强",
    "下班了",
    "周末去哪玩",
    "我觉得还行吧",
    "有没有人组队",
    "刚才那个视频好好笑",
    "明天要早起",
]


class NullSender:
    def __init__(self) -> None:
        self.next_id = -5_000_000_000

    async def send_group(self, group_id: int, segments: list[dict]) -> int | None:
        self.next_id -= 1
        return self.next_id


async def _fill(runtime: PallasRuntime, count: int) -> None:
    rng = random.Random(7)
    start = runtime.clock.now() - count * 20
    batch = []
    for i in range(count):
        user = 10_000 + rng.randrange(40)
        batch.append(
            StoredMessage(
                bot_id=BOT,
                group_id=GROUP,
                message_id=i + 1,
                user_id=user,
                time=start + i * 20,
                text=rng.choice(LINES),
                card=f"群友{user % 100}",
                raw_message="",
            )
        )
        if len(batch) == 2000:
            await runtime.repos.messages.add_many(batch)
            batch = []
    await runtime.repos.messages.add_many(batch)


async def run(messages: int, turns: int) -> None:
    workdir = Path(tempfile.mkdtemp(prefix="pallas-bench-"))
    shutil.copytree(REPO / "config", workdir / "config")
    (workdir / "config/groups/default.toml").write_text(
        "[chat]\nmerge_window_s = 0\n[routing.cooldown]\nchat_cooldown_s = 0\n", encoding="utf-8"
    )
    llm = FakeOpenAI(default_reply="好呀\n我也这么想")
    await llm.start()
    settings = PallasSettings(
        database_url=f"sqlite+aiosqlite:///{workdir / 'bench.db'}",
        pallas_config_dir=workdir / "config",
        openai_base_url=llm.base_url,
        openai_api_key="sk-bench",
    )
    runtime = await PallasRuntime.start(settings, nicknames=("帕拉斯",))
    try:
        t = time.perf_counter()
        await _fill(runtime, messages)
        print(f"stored {messages} messages in {time.perf_counter() - t:.1f}s")
        service = build_app(runtime, rng=random.Random(1)).chat

        async def no_sleep(_: float) -> None:
            return None

        service.sleep = no_sleep
        sender = NullSender()
        local_ms: list[float] = []
        stages: dict[str, list[float]] = {}
        for i in range(turns):
            user = 10_000 + i % 40
            turn = TurnInput(
                bot_id=BOT,
                group_id=GROUP,
                user_id=user,
                message_id=10_000_000 + i,
                time=runtime.clock.now(),
                text=f"帕拉斯，{LINES[i % len(LINES)]}？",
                segments=(Segment("at", {"qq": str(BOT)}),),
                sender=Sender(user, card=f"群友{user}"),
                mentions=(BOT,),
                to_me=True,
            )
            started = time.perf_counter()
            outcome = await service.handle(turn, sender)
            elapsed = (time.perf_counter() - started) * 1000
            snap = (await runtime.repos.snapshots.latest(GROUP, bot_id=BOT))[0]
            latency = float(snap.data.get("usage", {}).get("latency_ms", 0))
            if outcome.outcome == "delivered":
                local_ms.append(elapsed - latency)
                for name, ms in snap.data.get("stage_ms", {}).items():
                    stages.setdefault(name, []).append(float(ms))
        print(describe("local per REPLY turn", local_ms))
        for name, values in stages.items():
            print(describe(f"  stage {name}", values))
        print(f"delivered turns: {len(local_ms)}/{turns}")
    finally:
        await runtime.stop()
        await llm.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--turns", type=int, default=200)
    args = parser.parse_args(argv or [])
    asyncio.run(run(args.messages, args.turns))


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
