"""Event → LLM request latency of complete @ questions, through the real bot process.

Starts `bot.py` (tests.harness.bot_process), a OneBot v11 peer over WebSocket and the fake
OpenAI-compatible server; sends complete @ questions (one member each, so no burst) and measures
from the moment the event is written to the socket until the chat-completion request reaches
the fake server. Two groups: `[chat.merge_wait] mode = "smart"` (wait only when unfinished) and
`mode = "always"` (the old behaviour: every turn waits `merge_window_s` = 1.2 s). Then two-line
bursts ("@牛牛 我想问，" + "明天天气怎么样" 0.3 s later) in the smart group: each must still be
one request and one reply.

    python -m benchmarks.merge_wait [--questions 30] [--bursts 8]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import tempfile
import time
from pathlib import Path

from benchmarks.stats import describe
from tests.harness.bot_process import BotProcess
from tests.harness.fake_openai import FakeOpenAI
from tests.harness.onebot_peer import OneBotPeer

BOT = 2_900_000_001
SMART, ALWAYS = 880_000_001, 880_000_002
QUESTIONS = ["明天天气怎么样？", "帮我算一下 12*7", "你最喜欢哪个干员", "周末去爬山还是看电影？"]
GROUP_FILE = '[chat]\nmerge_window_s = 1.2\n[chat.merge_wait]\nmode = "{mode}"\n'
GROUP_FILE += "[routing.cooldown]\nchat_cooldown_s = 0\n"


def at_bot(text: str) -> list[dict]:
    return [
        {"type": "at", "data": {"qq": str(BOT)}},
        {"type": "text", "data": {"text": " " + text}},
    ]


async def _question_latencies(
    peer: OneBotPeer, llm: FakeOpenAI, group: int, count: int, first_user: int
) -> list[float]:
    latencies: list[float] = []
    for i in range(count):
        before = len(llm.chat_requests())
        sends = len(peer.sends())
        event = peer.group_message(group, first_user + i, at_bot(QUESTIONS[i % len(QUESTIONS)]))
        started = time.monotonic()
        await peer.send_event(event)
        requests = await llm.wait_for_requests(before + 1)
        latencies.append((requests[before].at - started) * 1000)
        await peer.wait_for_calls("send_group_msg", "send_msg", count=sends + 1)
    return latencies


async def _bursts(peer: OneBotPeer, llm: FakeOpenAI, count: int) -> tuple[int, int]:
    """(bursts answered with exactly one request and one reply, bursts sent)."""
    merged = 0
    for i in range(count):
        user = 70_000 + i
        before, sends = len(llm.chat_requests()), len(peer.sends())
        await peer.send_event(peer.group_message(SMART, user, at_bot("我想问，")))
        await asyncio.sleep(0.3)
        await peer.send_event(peer.group_message(SMART, user, "明天天气怎么样"))
        await peer.wait_for_calls("send_group_msg", "send_msg", count=sends + 1)
        await asyncio.sleep(1.0)  # anything extra would show up now
        if len(llm.chat_requests()) == before + 1 and len(peer.sends()) == sends + 1:
            merged += 1
    return merged, count


async def run(questions: int, bursts: int) -> None:
    workdir = Path(tempfile.mkdtemp(prefix="pallas-bench-merge-"))
    llm = FakeOpenAI(default_reply="好呀")
    await llm.start()
    bot = BotProcess(workdir, env_overrides={"OPENAI_BASE_URL": llm.base_url})
    await bot.start()
    for group, mode in ((SMART, "smart"), (ALWAYS, "always")):
        path = bot.config_dir / "groups" / f"{group}.toml"
        path.write_text(GROUP_FILE.format(mode=mode), encoding="utf-8")
    peer = OneBotPeer(bot.ws_url, self_id=BOT, access_token=bot.access_token)
    await peer.connect()
    try:
        await _question_latencies(peer, llm, SMART, 3, 90_000)  # warm-up (imports, BPE, DB)
        always = await _question_latencies(peer, llm, ALWAYS, max(questions // 3, 5), 40_000)
        smart = await _question_latencies(peer, llm, SMART, questions, 50_000)
        merged, sent = await _bursts(peer, llm, bursts)
        print(describe("event→request (always, before)", always))
        print(describe("event→request (smart, after)", smart))
        print(f"two-line bursts answered as one turn: {merged}/{sent}")
    finally:
        await peer.close()
        await bot.stop()
        await llm.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--questions", type=int, default=30)
    parser.add_argument("--bursts", type=int, default=8)
    args = parser.parse_args(argv or [])
    asyncio.run(run(args.questions, args.bursts))


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
