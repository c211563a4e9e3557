"""Generate `active_group.jsonl`: four members chatting, fourteen @ questions among it.

Deterministic (fixed seed): running it again rewrites the same file.

    .venv/bin/python benchmarks/transcripts/make_active_group.py
    .venv/bin/python -m benchmarks.prompt_cache --transcript active_group

The shape of an active small group in the evening: four regulars of group 739200001 talk
for about five minutes (a message every 1–4 s), and every one of them @s the bot three or four
times (fourteen questions, each followed by a few lines of chatter), so each asker's own
session grows while the group timeline moves on — the case a provider's prefix cache should
serve. Members' lines are labelled `address` (an @ question) or `chatter`.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from make_busy_group import group_event  # run as a script: its directory is on sys.path

SEED = 20251204
BOT_ID = 2854196310
GROUP_ID = 739200001
START = 1_764_849_600  # 2025-12-04 20:00 (UTC+8)
OUT = Path(__file__).with_name("active_group.jsonl")
LABELS = Path(__file__).with_name("active_group.labels.json")

MEMBERS = [(3_200_000_001, "阿杰"), (3_200_000_002, "小鱼干"), (3_200_000_003, "柚子"),
           (3_200_000_004, "老陈")]  # fmt: skip
CHATTER = (
    "哈哈哈哈", "笑死", "我刚到家", "今晚打不打排位", "打啊", "等我五分钟", "我在吃饭",
    "这局稳了", "又输了", "我好困", "明天还要早起", "冲冲冲", "离谱", "考试复习完了吗", "还没",
    "第三章好难", "点了外卖", "麻辣烫", "今天好冷", "下雪了吗", "我们这下了", "羡慕", "好看",
    "绝了", "这个可以", "先撤了", "回来了", "网不好", "好了", "有道理", "我也是这么想的",
    "真的假的", "那我试试", "周末去哪玩", "在家躺着", "也行",
)  # fmt: skip
QUESTIONS = (
    "你知道番茄炒蛋怎么做才好吃吗", "那要先炒蛋还是先炒番茄", "推荐一部最近好看的电影呗",
    "你觉得猫和狗哪个更好养？", "红烧肉要炖多久才软", "怎么才能早点睡着啊",
    "感冒了喝姜汤有用吗", "Python 的列表和元组有什么区别", "那字典呢",
    "你今天过得怎么样", "明天穿什么好呢", "周末去爬山会不会太冷", "火锅底料哪个牌子好",
    "你还记得我刚才问了什么吗",
)  # fmt: skip


def build() -> tuple[list[dict], dict[str, str]]:
    rng = random.Random(SEED)
    askers = [MEMBERS[i % 4] for i in range(len(QUESTIONS))]
    rng.shuffle(askers)
    events: list[dict] = []
    labels: dict[str, str] = {}
    at, mid = float(START), 6_000_000

    def emit(member: tuple[int, str], segments: list[dict[str, Any]], label: str) -> None:
        nonlocal at, mid
        at += rng.uniform(1.0, 4.0)
        mid += rng.randint(1, 97)
        events.append(group_event(mid, at, member[0], member[1], segments,
                                  group_id=GROUP_ID, start=START))  # fmt: skip
        labels[str(mid)] = label

    for question, asker in zip(QUESTIONS, askers, strict=True):
        for _ in range(rng.randint(4, 7)):
            emit(rng.choice(MEMBERS), [{"type": "text", "data": {"text": rng.choice(CHATTER)}}],
                 "chatter")  # fmt: skip
        at_bot = [{"type": "at", "data": {"qq": str(BOT_ID)}},
                  {"type": "text", "data": {"text": " " + question}}]  # fmt: skip
        emit(asker, at_bot, "address")
    return events, labels


def main() -> None:
    events, labels = build()
    with OUT.open("w", encoding="utf-8") as out:
        for event in events:
            out.write(json.dumps(event, ensure_ascii=False) + "\n")
    LABELS.write_text(json.dumps(labels, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
    span = (events[-1]["at_ms"] - events[0]["at_ms"]) / 1000
    print(f"{len(events)} messages from {len(MEMBERS)} members over {span:.0f} s → {OUT.name}")


if __name__ == "__main__":
    main()
