"""Tool planning on every group message: what it costs and how often it is wrong.

`plan_tool` runs before routing on each message, so it must stay far below the routing cost
(~0.3 ms per message). The quality half counts selections on the 500-message group transcript
(ordinary chat: every selection there is a false positive) and on a labelled list of real
requests and near-miss chatter.

    python -m benchmarks.tool_selection [--rounds 20]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from benchmarks.stats import describe
from pallas.core.turn import TurnInput
from pallas.features.tools.config import ToolsConfig
from pallas.features.tools.registry import default_registry
from pallas.features.tools.service import plan_tool, tool_request_text

TRANSCRIPT = Path(__file__).parent / "transcripts" / "group_500.jsonl"
ALIASES = ("牛牛", "帕拉斯")

REQUESTS: list[tuple[str, str]] = [
    ("calc", "算一下 12*34+5"),
    ("calc", "牛牛 1+2*3等于多少"),
    ("calc", "2^10是多少"),
    ("calc", "100/7=?"),
    ("calc", "计算 (3+4)×6"),
    ("dice", "掷个骰子"),
    ("dice", "roll 2d6"),
    ("dice", "帮我扔个d20"),
    ("dice", "抛硬币"),
    ("dice", "牛牛，丢个硬币"),
    ("choose", "帮我选：火锅还是烧烤"),
    ("choose", "吃饭还是睡觉，帮我选一个"),
    ("choose", "选一个：原神、方舟、崩铁"),
    ("countdown", "离12月25日还有几天"),
    ("countdown", "距离2027年1月1日还有多少天"),
    ("countdown", "100天后是几号"),
    ("countdown", "还有几天到元旦"),
    ("activity", "今天谁最活跃"),
    ("activity", "群里今天聊了多少"),
    ("activity", "今天谁话最多"),
]
NEAR_MISSES: list[str] = [
    "骰子游戏好玩吗",
    "我不会算数",
    "你选的那个不错",
    "还有几天就放假了好开心",
    "火锅还是烧烤？",
    "12点见",
    "3个人够不够",
    "2026-11-29 的活动记得来",
    "我的电话是138-0013-8000",
    "今天好累啊",
    "谁最活跃关你什么事",
    "这个计算器坏了",
    "硬币收藏有人懂吗",
    "选择困难症又犯了",
    "1+1=2 这都不会？",
]


def _turn(text: str) -> TurnInput:
    return TurnInput(bot_id=1, group_id=2, user_id=3, message_id=4, time=0.0, text=text)


def _transcript_texts() -> list[str]:
    texts = []
    for line in TRANSCRIPT.read_text(encoding="utf-8").splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if event.get("post_type") != "message" or event.get("user_id") == event.get("self_id"):
            continue
        message = event.get("message")
        if isinstance(message, list):
            parts = [s.get("data", {}).get("text", "") for s in message if s.get("type") == "text"]
            texts.append("".join(parts))
        else:
            texts.append(str(event.get("raw_message", "")))
    return texts


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args(argv or [])
    registry, config = default_registry(), ToolsConfig()
    texts = _transcript_texts()
    turns = [_turn(t) for t in texts + [r for _, r in REQUESTS] + NEAR_MISSES]

    def plan(turn: TurnInput):
        return plan_tool(tool_request_text(turn, ALIASES), config, registry, is_admin=False)

    samples: list[float] = []
    for _ in range(args.rounds):
        for turn in turns:
            started = time.perf_counter()
            plan(turn)
            samples.append((time.perf_counter() - started) * 1_000_000)
    print(f"{len(turns)} messages x {args.rounds} rounds")
    print(describe("plan_tool per message", samples, unit="us"))

    false_on_chat = [t for t in texts if plan(_turn(t)).requested]
    right = [(tool, text) for tool, text in REQUESTS if _selected(plan(_turn(text))) == tool]
    near = [text for text in NEAR_MISSES if plan(_turn(text)).requested]
    print(f"transcript chat: {len(false_on_chat)}/{len(texts)} selected (false positives)")
    print(f"labelled requests: {len(right)}/{len(REQUESTS)} picked the right tool")
    print(f"near misses: {len(near)}/{len(NEAR_MISSES)} selected (false positives)")
    for text in false_on_chat + near:
        print(f"  false positive: {text}")
    for tool, text in REQUESTS:
        if (tool, text) not in right:
            print(f"  missed ({tool}): {text} -> {_selected(plan(_turn(text)))}")


def _selected(plan) -> str | None:
    return plan.call.name if plan.call is not None else None


if __name__ == "__main__":
    main(sys.argv[1:])
