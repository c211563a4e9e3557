"""What a kill -9 loses under a message burst, and what the OneBot frame guard costs.

Starts the real bot (`tests.harness.bot_process`), connects the real OneBot peer, pushes group
messages at `--rate` msg/s into several groups (every 20th one @s the bot, so replies run
through the fake LLM and keep the event loop busy), kills the process with SIGKILL
`--kill-after` seconds into the burst and counts what the database holds. The loss window is
the time between the kill and the send of the first message that was not stored (0 when all
were). Then it times `check_frame` on typical frames (µs per frame, next to `json.loads`).

    python -m benchmarks.crash_loss [--rate 250] [--kill-after 1 4]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path

from benchmarks.stats import describe
from pallas.core.db.engine import create_engine, session_factory
from pallas.core.db.repositories.messages import MessageRepository
from pallas.onebot.frame_guard import check_frame
from tests.harness.bot_process import BotProcess
from tests.harness.fake_openai import FakeOpenAI
from tests.harness.onebot_peer import OneBotPeer

BOT_ID = 2_900_000_001
GROUPS = [88_000_001 + i for i in range(5)]
LINES = ["今天吃什么", "有人打活动吗", "哈哈哈哈", "新干员好强", "下班了", "周末去哪玩"]


async def _stored_ids(url: str) -> set[int]:
    engine = create_engine(url)
    repo = MessageRepository(session_factory(engine))
    ids: set[int] = set()
    for group in GROUPS:
        ids.update(m.message_id for m in await repo.recent(BOT_ID, group, limit=100_000))
    await engine.dispose()
    return ids


async def crash_run(rate: float, kill_after: float, workdir: Path) -> dict[str, float]:
    fake = FakeOpenAI(default_reply="好哦")
    await fake.start()
    bot = BotProcess(workdir, env_overrides={"OPENAI_BASE_URL": fake.base_url})
    await bot.start()
    peer = OneBotPeer(bot.ws_url, self_id=BOT_ID, access_token=bot.access_token)
    await peer.connect()
    await asyncio.sleep(0.5)
    sent: dict[int, float] = {}
    started = time.monotonic()
    i = 0
    try:
        while (now := time.monotonic()) - started < kill_after:
            due = started + i / rate
            if due > now:
                await asyncio.sleep(due - now)
            text = LINES[i % len(LINES)]
            message = [{"type": "at", "data": {"qq": str(BOT_ID)}}] if i % 20 == 0 else []
            message.append({"type": "text", "data": {"text": f" {text} {i}"}})
            event = peer.group_message(GROUPS[i % len(GROUPS)], 60_000 + i % 37, message)
            await peer.send_event(event)
            sent[event["message_id"]] = time.monotonic()
            i += 1
        assert bot.proc is not None
        bot.proc.kill()  # SIGKILL: no shutdown hook, no final flush
        killed = time.monotonic()
        bot.proc.wait()
    finally:
        await peer.close()
        await fake.stop()
    stored = await _stored_ids(bot.database_url)
    lost = [mid for mid in sent if mid not in stored]
    window = (killed - min(sent[mid] for mid in lost)) * 1000 if lost else 0.0
    return {"sent": len(sent), "stored": len(stored & sent.keys()), "lost": len(lost),
            "window_ms": window}  # fmt: skip


def frame_guard_cost(rounds: int = 2000) -> None:
    peer = OneBotPeer("ws://unused", self_id=BOT_ID)
    text_event = peer.group_message(GROUPS[0], 60_001, "今天吃什么呀，有人一起打活动吗")
    rich = [{"type": "at", "data": {"qq": str(BOT_ID)}}, {"type": "reply", "data": {"id": "5"}}]
    rich += [{"type": "text", "data": {"text": "这个版本的新干员好强 " * 3}}] * 10
    rich += [{"type": "image", "data": {"file": "a.jpg", "url": "https://x/" + "a" * 200}}] * 4
    rich_event = peer.group_message(GROUPS[0], 60_002, rich)
    api_result = {"status": "ok", "retcode": 0, "data": {"message_id": -2_000_000_001},
                  "echo": "123"}  # fmt: skip
    for name, payload in [("text message", text_event), ("rich message (16 segs)", rich_event),
                          ("API result", api_result)]:  # fmt: skip
        frame = json.dumps(payload, ensure_ascii=False)
        guard, parse = [], []
        for _ in range(rounds):
            t0 = time.perf_counter()
            check_frame(frame)
            t1 = time.perf_counter()
            json.loads(frame)
            t2 = time.perf_counter()
            guard.append((t1 - t0) * 1e6)
            parse.append((t2 - t1) * 1e6)
        print(describe(f"guard {name} {len(frame)}B", guard, "µs"))
        print(describe("  json.loads alone", parse, "µs"))


async def run(rate: float, kill_after: list[float]) -> None:
    for seconds in kill_after:
        with tempfile.TemporaryDirectory(prefix="pallas-crash-") as tmp:
            result = await crash_run(rate, seconds, Path(tmp) / "bot")
        print(
            f"rate {rate:.0f} msg/s, kill -9 after {seconds:.1f}s: sent {result['sent']}, "
            f"stored {result['stored']}, lost {result['lost']}, "
            f"loss window {result['window_ms']:.0f} ms"
        )
    frame_guard_cost()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rate", type=float, default=250.0)
    parser.add_argument("--kill-after", type=float, nargs="+", default=[1.0, 4.0])
    args, _ = parser.parse_known_args()
    asyncio.run(run(args.rate, args.kill_after))


if __name__ == "__main__":
    main()
