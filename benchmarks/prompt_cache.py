"""How much of each reply request a provider's prefix cache can serve, per prompt layout.

Plays a group transcript through the real bot (`bot.py` in a subprocess, a OneBot v11 peer over
WebSocket, the fake OpenAI-compatible server), once with `[context] prompt_layout = "spec"`
(every section in one system message before the history) and once with `"cache"` (stable
head → session history → this turn's blocks → the message), and prints for the reply requests:

- the **cacheable-prefix share**: the characters of a request that repeat the start of an
  earlier request (any chat request of the run within the last 5 minutes), over its length —
  what DeepSeek / OpenAI / Qwen bill at the cache price (they count tokens in 64- to 128-token
  units; characters are the provider-neutral measure), median / p10 / p90 / mean;
- where the first difference falls (which system section or which message), most common first.

Transcripts with long silences are played compressed (`--max-gap`, seconds between messages).

    python -m benchmarks.prompt_cache [--transcript active_group] [--max-gap 4.0]
        [--layouts spec,cache] [--dump DIR]   # DIR/<layout>.json: the last reply request
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.harness.bot_process import BotProcess
from tests.harness.fake_openai import FakeOpenAI, RecordedRequest
from tests.harness.group_defaults import write_group_defaults
from tests.harness.onebot_peer import OneBotPeer

TRANSCRIPTS = Path(__file__).parent / "transcripts"
BOT = 2_900_000_001
TRANSCRIPT_BOTS = {"2854196310"}
CURRENT_HEADER = "【用户消息"
WINDOW_S = 300.0


@dataclass(frozen=True)
class Measured:
    layout: str
    last_request: list[dict[str, Any]]
    shares: list[float]
    first_difference: Counter[str]
    requests: int
    mean_chars: float


def serialise(messages: list[dict[str, Any]]) -> str:
    """The request as a provider's chat template sees it: role markers and text in order."""
    parts = []
    for message in messages:
        content = message.get("content", "")
        if not isinstance(content, str):
            content = "".join(
                str(b.get("text", "")) if b.get("type") == "text" else "<image>" for b in content
            )
        parts.append(f"<|{message.get('role')}|>{content}")
    return "".join(parts)


def common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    lo, hi = 0, n
    while lo < hi:  # binary search on equal prefixes (the strings are long)
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _is_reply(request: RecordedRequest) -> bool:
    last = request.messages[-1] if request.messages else {}
    return last.get("role") == "user" and CURRENT_HEADER in str(last.get("content", ""))


def where(messages: list[dict[str, Any]], offset: int) -> str:
    """The message (and for a system message the 【section】) where `offset` falls."""
    position = 0
    for index, message in enumerate(messages):
        text = serialise([message])
        if offset < position + len(text):
            role = str(message.get("role"))
            if role != "system":
                return f"message {index} ({role})"
            inside = text[: offset - position + 1]
            header = inside.rsplit("【", 1)[-1].split("】", 1)[0] if "【" in inside else "head"
            return f"system {index}: 【{header}】"
        position += len(text)
    return "end"


def measure(layout: str, requests: list[RecordedRequest]) -> Measured:
    seen: list[tuple[float, str]] = []
    shares: list[float] = []
    firsts: Counter[str] = Counter()
    sizes: list[int] = []
    for request in requests:
        text = serialise(request.messages)
        earlier = [s for t, s in seen if request.at - t <= WINDOW_S]
        if _is_reply(request):
            best = max((common_prefix(text, s) for s in earlier), default=0)
            shares.append(best / len(text) if text else 0.0)
            sizes.append(len(text))
            firsts[where(request.messages, best)] += 1
        seen.append((request.at, text))
    mean = statistics.fmean(sizes) if sizes else 0.0
    replies = [r for r in requests if _is_reply(r)]
    last = replies[-1].messages if replies else []
    return Measured(layout, last, shares, firsts, len(shares), mean)


def _segments(event: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for seg in event["message"]:
        if seg["type"] == "at" and seg["data"]["qq"] in TRANSCRIPT_BOTS:
            seg = {"type": "at", "data": {"qq": str(BOT)}}
        out.append(seg)
    return out


def _times(events: list[dict[str, Any]], max_gap: float) -> list[float]:
    """Send offsets in seconds: the transcript's own pace, silences cut to `max_gap`."""
    out, at, last = [], 0.0, None
    for event in events:
        t = event["at_ms"] / 1000 if "at_ms" in event else float(event["time"])
        at += 0.0 if last is None else min(max(t - last, 0.0), max_gap)
        out.append(at)
        last = t
    return out


async def play(events: list[dict[str, Any]], layout: str, max_gap: float) -> Measured:
    workdir = Path(tempfile.mkdtemp(prefix="pallas-bench-cache-"))
    llm = FakeOpenAI(default_reply="好呀")
    await llm.start()
    bot = BotProcess(workdir, env_overrides={"OPENAI_BASE_URL": llm.base_url})
    bot.prepare()
    write_group_defaults(bot.config_dir, context={"prompt_layout": layout})
    await bot.start()
    peer = OneBotPeer(bot.ws_url, self_id=BOT, access_token=bot.access_token)
    await peer.connect()
    try:
        start = time.monotonic()
        for event, offset in zip(events, _times(events, max_gap), strict=True):
            if str(event.get("user_id")) in TRANSCRIPT_BOTS or event.get("post_type") != "message":
                continue
            delay = offset - (time.monotonic() - start)
            if delay > 0:
                await asyncio.sleep(delay)
            sender = event.get("sender") or {}
            await peer.send_event(
                peer.group_message(
                    event["group_id"], event["user_id"], _segments(event),
                    message_id=event["message_id"], card=sender.get("card", ""),
                    nickname=sender.get("nickname", ""),
                )
            )  # fmt: skip
        await asyncio.sleep(6.0)  # the last turns finish
        return measure(layout, llm.chat_requests())
    finally:
        await peer.close()
        await bot.stop()
        await llm.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def report(result: Measured) -> list[str]:
    s = result.shares
    lines = [
        f"{result.layout:>5}: {result.requests} reply requests, mean {result.mean_chars:.0f} chars;"
        f" cacheable-prefix share median {statistics.median(s) if s else 0:.2f}"
        f" p10 {_pct(s, 0.1):.2f} p90 {_pct(s, 0.9):.2f} mean {statistics.fmean(s) if s else 0:.2f}"
    ]
    for place, count in result.first_difference.most_common(4):
        lines.append(f"       first difference in {place}: {count}")
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--transcript", default="active_group")
    parser.add_argument("--max-gap", type=float, default=4.0)
    parser.add_argument("--layouts", default="spec,cache")
    parser.add_argument("--dump", type=Path, default=None)
    args = parser.parse_args(argv or [])
    path = TRANSCRIPTS / f"{args.transcript}.jsonl"
    events = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    print(f"{path.name}: {len(events)} messages, {len({e.get('user_id') for e in events})} members")
    layouts = args.layouts.split(",")
    results = [asyncio.run(play(events, layout, args.max_gap)) for layout in layouts]
    for result in results:
        for line in report(result):
            print(line)
        if args.dump is not None:
            args.dump.mkdir(parents=True, exist_ok=True)
            path = args.dump / f"{result.layout}.json"
            path.write_text(json.dumps(result.last_request, ensure_ascii=False, indent=1), "utf-8")
    if len(results) == 2:
        before, after = (statistics.median(r.shares) if r.shares else 0.0 for r in results)
        ratio = after / before if before else float("inf")
        print(
            f"median share {layouts[0]} → {layouts[1]}: {before:.2f} → {after:.2f} (×{ratio:.2f})"
        )


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
