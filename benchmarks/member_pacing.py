"""The member limit: conversations against floods, and the transcripts' own pace.

Plays member patterns through the live decision (`decide_member_turn`, the bot answering each
allowed turn after `ANSWER_S`) and prints, per pattern, how many lines reach the model — for
today's defaults and for other `conversation_gap_s` values, with the old bucket-only limit
(`conversation_daily_turns = 0`) beside them. Then the gaps between one member's @s in the
bundled transcripts, which is where the default gap comes from.
`python -m benchmarks member_pacing`.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path

from benchmarks.stats import percentile
from pallas.features.cost.config import MemberLimitConfig
from pallas.features.cost.rate_limit import BucketState, decide_member_turn

T0 = 1_760_000_000.0
ANSWER_S = 3.0  # the bot's answer lands this long after an allowed line
TRANSCRIPTS = Path(__file__).parent / "transcripts"
TOPICS = (
    "爬山 泰山 日出 排队 黄山 迎客松 索道 秋天 照片 季节 螃蟹 大闸蟹 阳澄湖 做饭 火锅 电影 猫"
    " 周末 加班 游戏"
)


def paced(gap: float, n: int = 19) -> list[tuple[float, str]]:
    words = TOPICS.split()
    return [(i * gap, f"你觉得{words[i % len(words)]}怎么样{i}") for i in range(n)]


PATTERNS: dict[str, list[tuple[float, str]]] = {
    "conversation, a line every 25 s (19)": paced(25),
    "conversation, every 12 s (19)": paced(12),
    "quick conversation, every 9 s (19)": paced(9),
    "flood: 20 @s in one minute": [(i * 3.0, f"第{i}个问题") for i in range(20)],
    "flood: 60 @s in one minute": [(i * 1.0, f"问{i}") for i in range(60)],
    "repeat: the same line every 25 s (19)": [(i * 25.0, "在吗在吗") for i in range(19)],
    "an evening: a line every 30 s for 2 h (240)": paced(30, 240),
}


def play(lines: list[tuple[float, str]], limits: MemberLimitConfig) -> int:
    state: BucketState | None = None
    today = allowed = 0
    for t, text in lines:
        d = decide_member_turn(state, T0 + t, limits, text=text, conversation_today=today)
        state = d.state or state
        today += d.counts_conversation
        if d.allowed:
            allowed += 1
            if state is not None:  # the answer arrives before the next line (or not)
                state = state.answered(T0 + t + ANSWER_S)
    return allowed


def at_gaps() -> Iterator[tuple[str, list[float]]]:
    for path in sorted(TRANSCRIPTS.glob("*.jsonl")):
        times: dict[int, list[float]] = defaultdict(list)
        for raw in path.read_text(encoding="utf-8").splitlines():
            event = json.loads(raw)
            segments = event.get("message") or []
            if any(
                s.get("type") == "at" and str(s.get("data", {}).get("qq")) == str(event["self_id"])
                for s in segments
            ):
                times[event["user_id"]].append(float(event["time"]))
        yield path.stem, [b - a for ts in times.values() for a, b in pairwise(ts)]


def main() -> None:
    default = MemberLimitConfig()
    variants = {
        "bucket only (old)": default.model_copy(update={"conversation_daily_turns": 0}),
        "gap 5 s": default.model_copy(update={"conversation_gap_s": 5.0}),
        f"gap {default.conversation_gap_s:.0f} s (default)": default,
        "gap 12 s": default.model_copy(update={"conversation_gap_s": 12.0}),
    }
    print(
        f"member limit: burst {default.burst}, {default.turns} turns / {default.window_s:.0f} s,"
        f" conversation ceiling {default.conversation_daily_turns} a day; answers after"
        f" {ANSWER_S:.0f} s"
    )
    print(f"{'pattern':46}" + "".join(f"{name:>20}" for name in variants))
    for pattern, lines in PATTERNS.items():
        counts = [play(lines, limits) for limits in variants.values()]
        print(f"{pattern:46}" + "".join(f"{f'{c}/{len(lines)}':>20}" for c in counts))
    print("\ngaps between one member's @s in the bundled transcripts:")
    for name, gaps in at_gaps():
        if not gaps:
            print(f"  {name:16} no member @s twice")
            continue
        short = sum(g < default.conversation_gap_s for g in gaps)
        print(
            f"  {name:16} n={len(gaps):3}  min {min(gaps):6.0f} s"
            f"  p10 {percentile(gaps, 10):6.0f} s  p50 {percentile(gaps, 50):6.0f} s"
            f"  under the default gap: {short}"
        )


if __name__ == "__main__":
    main()
