"""Per-message cost of an unaddressed group message's Pallas path, step by step, in-process.

`benchmarks.ingest` measures the whole bot against a bare NoneBot bot, but on a shared machine
its rates swing with the load. This times the steps Pallas adds to each unaddressed message,
one after the other on the same frames (real runtime over SQLite, the e2e harness config: dice
off), as microseconds per message (best of `--repeat` passes, the steadiest figure on a busy
machine):

    parse      the OneBot frame → NoneBot `GroupMessageEvent` (`GuardedAdapter.json_to_event`)
               next to the stock adapter's parse (what a bare bot pays)
    convert    the event → `TurnInput` (once per event, at read: the steps below share it)
    record     the edge's recording at read (the conversion, config, `writer.submit`)
    line key   the edge's line key of a group line (`pallas.core.lines`: the fingerprint every
               account's copy shares, numbered per account), what several accounts dedupe on
    lane       the edge's lane choice (`LaneChoice`)
    route      `RouteStep.route` (freshness, tool plan, routing with its state)

    python -m benchmarks.ingest_path [--messages 3000] [--groups 50] [--repeat 3]
                                     [--profile /tmp/route.pstats]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from nonebot.adapters.onebot.v11 import Adapter, GroupMessageEvent

from pallas.app import build_app
from pallas.core.lines import Occurrences
from pallas.core.settings import PallasSettings
from pallas.core.turn import TurnInput
from pallas.onebot.adapter import GuardedAdapter
from pallas.onebot.convert import as_int, turn_input_from_event
from pallas.onebot.edge import GroupAliases
from pallas.onebot.events import convert_event, event_payload
from pallas.onebot.lane_choice import LaneChoice
from pallas.onebot.recording import record_received
from pallas.runtime import PallasRuntime
from tests.harness.group_defaults import write_group_defaults

BOT_ID = 2_900_000_001
REPO = Path(__file__).resolve().parents[1]
LINES = ["今天吃什么", "有人打活动吗", "哈哈哈哈", "新干员好强", "下班了", "周末去哪玩", "好困"]


def frames(messages: int, groups: int, first_id: int) -> list[dict[str, Any]]:
    """Unaddressed group messages as the OneBot peer of the e2e harness sends them."""
    now = int(time.time())
    out = []
    for i in range(messages):
        text = f"{LINES[i % len(LINES)]}{i}"
        out.append(
            {
                "time": now,
                "self_id": BOT_ID,
                "post_type": "message",
                "message_type": "group",
                "sub_type": "normal",
                "message_id": first_id + i,
                "group_id": 70_000_001 + i % groups,
                "user_id": 500_000 + i % 97,
                "anonymous": None,
                "message": [{"type": "text", "data": {"text": text}}],
                "raw_message": text,
                "font": 0,
                "sender": {"user_id": 500_000 + i % 97, "nickname": "member", "card": ""},
            }
        )
    return out


def convert(event: GroupMessageEvent) -> TurnInput:
    """What one conversion costs (the edge converts each event once, when it is read)."""
    reply_user = event.reply.sender.user_id if event.reply is not None else None
    return turn_input_from_event(
        event_payload(event), to_me=event.to_me, reply_to_user_id=as_int(reply_user)
    )


def per_message_us(run: Callable[[], None], count: int, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return best / count * 1e6


async def measure(args: argparse.Namespace, workdir: Path) -> dict[str, float]:
    shutil.copytree(REPO / "config", workdir / "config")
    write_group_defaults(workdir / "config")
    settings = PallasSettings(
        database_url=f"sqlite+aiosqlite:///{workdir / 'bench.db'}",
        pallas_config_dir=workdir / "config",
        openai_base_url="http://127.0.0.1:9/v1",
        openai_api_key="sk-bench",
    )
    runtime = await PallasRuntime.start(settings, nicknames=("帕拉斯", "牛牛"))
    try:
        app = build_app(runtime, rng=random.Random(1))
        n, results = args.messages, {}
        raw = frames(n, args.groups, 1_000_000)
        results["parse (stock adapter)"] = per_message_us(
            lambda: [Adapter.json_to_event(f) for f in raw], n, args.repeat
        )
        results["parse (GuardedAdapter)"] = per_message_us(
            lambda: [GuardedAdapter.json_to_event(f) for f in raw], n, args.repeat
        )
        events = [Adapter.json_to_event(f) for f in raw]
        results["convert (uncached)"] = per_message_us(
            lambda: [convert(e) for e in events],
            n,
            args.repeat,  # type: ignore[arg-type]
        )
        record_s = float("inf")
        for _ in range(args.repeat):  # new event objects: converted once, then recorded
            fresh = [Adapter.json_to_event(f) for f in raw]
            started = time.perf_counter()
            for event in fresh:
                record_received(runtime, convert_event(event).turn)  # type: ignore[arg-type]
            record_s = min(record_s, time.perf_counter() - started)
        results["convert + record"] = record_s / n * 1e6
        turns_read = [convert(e) for e in fresh]  # type: ignore[arg-type]
        now = time.time()

        def line_keys() -> None:
            occurrences = Occurrences()
            for t in turns_read:
                segments = [seg.to_dict() for seg in t.segments]
                occurrences.key_for(t.bot_id, t.group_id, t.user_id, t.time, segments, now)

        results["line key"] = per_message_us(line_keys, n, args.repeat)
        lane = LaneChoice(GroupAliases(app))
        results["lane"] = per_message_us(
            lambda: [lane.for_turn(t) for t in turns_read], n, args.repeat
        )
        router = app.chat.route_step
        route_s = float("inf")
        for rep in range(args.repeat):  # fresh message ids: each pass routes new messages
            turns = [
                convert(e)  # type: ignore[arg-type]
                for e in (
                    Adapter.json_to_event(f) for f in frames(n, args.groups, 2_000_000 + rep * n)
                )
            ]
            profiler = cProfile.Profile() if args.profile and rep == 0 else None
            started = time.perf_counter()
            if profiler is not None:
                profiler.enable()
            for turn in turns:
                await router.route(turn)
            if profiler is not None:
                profiler.disable()
                profiler.dump_stats(args.profile)
                continue
            route_s = min(route_s, time.perf_counter() - started)
        results["route"] = route_s / n * 1e6
        await runtime.writer.flush()
        return results
    finally:
        await runtime.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--messages", type=int, default=3000)
    parser.add_argument("--groups", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--profile", default="", help="cProfile the first route pass to this file")
    args = parser.parse_args(argv or [])
    with tempfile.TemporaryDirectory() as tmp:
        results = asyncio.run(measure(args, Path(tmp)))
    print(f"{args.messages} unaddressed messages over {args.groups} groups, best of {args.repeat}")
    for name, us in results.items():
        print(f"  {name:<24} {us:8.1f} µs/message")
    steps = ("parse (GuardedAdapter)", "convert + record", "line key", "lane", "route")
    print(f"  {'Pallas steps, total':<24} {sum(results[s] for s in steps):8.1f} µs/message")


if __name__ == "__main__":
    main(sys.argv[1:])
