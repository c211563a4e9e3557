"""Generate `busy_group.jsonl` + `busy_group.labels.json`: a busy evening minute by minute.

Deterministic (fixed seed): running it again rewrites the same files.

    .venv/bin/python benchmarks/transcripts/make_busy_group.py
    .venv/bin/pallas replay benchmarks/transcripts/busy_group.jsonl
    .venv/bin/python -m benchmarks.busy_group     # plays it through the real bot

Twelve members of group 739100001 talk at about 4 messages a second for ~85 s: several threads
at once (a game, dinner, an exam, a football match), members answering each other by name and
by quote. Among the chatter, labelled for the benchmark:

- `address`      ten complete @ questions ("@牛牛 你知道番茄炒蛋怎么做才好吃吗"), each from a
                 member who sent another line a second or two before (a busy member);
- `address_head` / `address_tail`   three two-line questions: "@牛牛 我想问，" and, 0.3–0.6 s
                 later, the same member's "明天会下雨吗" — one turn each;
- `open_q`       four open questions thrown at the group ("晚上吃什么"), each answered by
                 other members within seconds: the group's, not the bot's;
- `chatter`      everything else.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

SEED = 20251203
BOT_ID = 2854196310
GROUP_ID = 739100001
START = 1_764_763_200  # 2025-12-03 20:00 (UTC+8)
OUT = Path(__file__).with_name("busy_group.jsonl")
LABELS = Path(__file__).with_name("busy_group.labels.json")

NAMES = (
    "阿杰", "小鱼干", "土豆丝", "柚子", "老陈", "可乐", "阿狸", "大橘", "木木", "星星", "团子",
    "咸鱼王",
)  # fmt: skip
MEMBERS = [(3_100_000_001 + i, name) for i, name in enumerate(NAMES)]

CHATTER = (
    "哈哈哈哈", "笑死", "这也太离谱了", "我刚到家", "今晚打不打排位", "打啊", "等我五分钟",
    "你先开", "我在吃饭", "这局稳了", "又输了", "队友太坑", "我好困", "明天还要早起",
    "有没有人一起", "冲冲冲", "6666", "？？？", "离谱", "考试复习完了吗", "还没", "救命",
    "第三章好难", "我直接放弃", "比赛开始了", "进球了！", "这球不算吧", "裁判瞎了", "点了外卖",
    "麻辣烫", "又是麻辣烫", "今天好冷", "下雪了吗", "没有", "我们这下了", "羡慕", "我也想看雪",
    "发张图", "好看", "绝了", "这个可以", "我不行了", "先撤了", "回来了", "刚才卡了", "网不好",
    "重连一下", "好了",
)  # fmt: skip
ADDRESS = (
    "你知道番茄炒蛋怎么做才好吃吗", "帮我想个周末去哪玩的主意吧", "你觉得猫和狗哪个更好养？",
    "红烧肉要炖多久才软", "推荐一部最近好看的电影呗", "怎么才能早点睡着啊",
    "感冒了喝姜汤有用吗", "Python 的列表和元组有什么区别", "你今天过得怎么样",
    "明天穿什么好呢",
)  # fmt: skip
TWO_LINE = (("我想问，", "明天会下雨吗"), ("那个，", "期末考试一般几点开始"),
            ("问一下哈，", "火锅底料哪个牌子好"))  # fmt: skip
OPEN_QUESTIONS = (
    ("晚上吃什么", ["麻辣烫", "吃火锅吧", "随便点个外卖"]),
    ("有人在玩那个新出的独立游戏吗", ["我在玩", "好玩吗", "还行 画风不错"]),
    ("周末有人去爬山吗", ["太冷了不去", "我可以", "去哪座山"]),
    ("这周的作业是啥", ["第三章习题", "还有实验报告", "谢了"]),
)
TOTAL = 340


def group_event(
    mid: int,
    at: float,
    user: int,
    name: str,
    segments: list[dict[str, Any]],
    *,
    group_id: int = GROUP_ID,
    start: float = START,
) -> dict:
    """One OneBot v11 group message event (with the replay's `at_ms` since `start`)."""
    raw = "".join(
        f"[CQ:at,qq={s['data']['qq']}]" if s["type"] == "at" else s["data"]["text"]
        for s in segments
    )
    return {
        "self_id": BOT_ID, "user_id": user, "time": int(at), "message_id": mid,
        "message_type": "group", "sub_type": "normal", "post_type": "message",
        "group_id": group_id, "message": segments, "raw_message": raw, "font": 14,
        "sender": {"user_id": user, "nickname": name, "card": name, "role": "member"},
        "at_ms": round((at - start) * 1000),
    }  # fmt: skip


def _text(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "data": {"text": text}}]


def _at(text: str) -> list[dict[str, Any]]:
    return [{"type": "at", "data": {"qq": str(BOT_ID)}}, *_text(" " + text)]


def build() -> tuple[list[dict], dict[str, str]]:
    rng = random.Random(SEED)
    plan: list[tuple[str, str]] = ["chatter"] * TOTAL  # what each slot holds
    slots = rng.sample(range(8, TOTAL - 12, 6), len(ADDRESS) + len(TWO_LINE) + len(OPEN_QUESTIONS))
    kinds = ["address"] * len(ADDRESS) + ["two_line"] * len(TWO_LINE) + ["open"] * 4
    for slot, kind in zip(sorted(slots), rng.sample(kinds, len(kinds)), strict=True):
        plan[slot] = kind
    events: list[dict] = []
    labels: dict[str, str] = {}
    at, mid = float(START), 5_000_000
    addresses, pairs, opens = iter(ADDRESS), iter(TWO_LINE), iter(OPEN_QUESTIONS)
    last_speaker = MEMBERS[0]

    def emit(member: tuple[int, str], segments: list[dict[str, Any]], label: str, gap: float):
        nonlocal at, mid
        at += gap
        mid += rng.randint(1, 97)
        events.append(group_event(mid, at, member[0], member[1], segments))
        labels[str(mid)] = label

    for kind in plan:
        gap = min(rng.expovariate(5.0), 1.0)
        if kind == "chatter":
            last_speaker = rng.choice(MEMBERS)
            emit(last_speaker, _text(rng.choice(CHATTER)), "chatter", gap)
        elif kind == "address":  # the member was just typing: a line ~1–2 s before
            emit(last_speaker, _text(rng.choice(CHATTER)), "chatter", gap)
            emit(last_speaker, _at(next(addresses)), "address", rng.uniform(0.8, 2.0))
        elif kind == "two_line":
            head, tail = next(pairs)
            asker = rng.choice(MEMBERS)
            emit(asker, _at(head), "address_head", gap)
            emit(asker, _text(tail), "address_tail", rng.uniform(0.3, 0.6))
        else:
            question, answers = next(opens)
            asker = rng.choice(MEMBERS)
            emit(asker, _text(question), "open_q", gap)
            for answer in answers:
                other = rng.choice([m for m in MEMBERS if m != asker])
                emit(other, _text(answer), "chatter", rng.uniform(0.5, 1.5))
    return events, labels


def main() -> None:
    events, labels = build()
    with OUT.open("w", encoding="utf-8") as out:
        for event in events:
            out.write(json.dumps(event, ensure_ascii=False) + "\n")
    LABELS.write_text(json.dumps(labels, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
    span = (events[-1]["at_ms"] - events[0]["at_ms"]) / 1000
    print(f"{len(events)} messages from {len(MEMBERS)} members over {span:.0f} s "
          f"({len(events) / span:.1f}/s) → {OUT.name}, {LABELS.name}")  # fmt: skip


if __name__ == "__main__":
    main()
