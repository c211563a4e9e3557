"""Scripted group chatter for learning tests, and the label answers a fake cheap model gives."""

from __future__ import annotations

import json
from dataclasses import dataclass

# (trigger, response): members answering members. The first one is what tests recall with
# 「快了吗」; the others give the group a few hundred realistic short lines.
TOPICS: tuple[tuple[str, str], ...] = (
    ("快了快了", "确实可以"),
    ("今天好热啊", "空调开起来"),
    ("晚上吃什么", "火锅走起"),
    ("作业写完没", "还差一点点"),
    ("周末去哪玩", "去爬山吧"),
    ("这游戏好难", "多练练就好"),
    ("新番更新了", "冲冲冲"),
    ("下雨了欸", "记得带伞"),
    ("困死了", "早点睡觉"),
    ("谁有充电器", "我这有一个"),
)
FILLERS = ("在吗", "来了来了", "笑死", "有道理", "好耶", "是这样的", "我也觉得", "懂了")


@dataclass(frozen=True, slots=True)
class Line:
    message_id: int
    user_id: int
    text: str
    reply_to: int | None = None


def group_script(
    rounds: int, *, first_id: int, users: tuple[int, ...], quote_every: int = 3
) -> list[Line]:
    """`rounds` × (trigger, adjacent answer, sometimes a quoting answer, sometimes a filler).

    Every line is a single short bubble by a different member than the one before it, so the
    group's rhythm is "one short bubble per turn".
    """
    lines: list[Line] = []
    next_id = first_id
    for r in range(rounds):
        trigger, response = TOPICS[r % len(TOPICS)]
        suffix = "" if r < len(TOPICS) else ["", "呀", "啊", "呢", "哦"][(r // len(TOPICS)) % 5]
        last = lines[-1].user_id if lines else None
        order = [u for u in users[r % len(users) :] + users[: r % len(users)] if u != last]
        a, b, c = order[0], order[1], order[2]
        trigger_id = next_id
        lines.append(Line(trigger_id, a, trigger + suffix))
        lines.append(Line(trigger_id + 1, b, response + suffix))
        next_id += 2
        if r % quote_every == 0:
            lines.append(Line(next_id, c, f"{response}{suffix}！", reply_to=trigger_id))
            next_id += 1
        if r % 4 == 1:
            speaker = a if lines[-1].user_id != a else b
            lines.append(Line(next_id, speaker, FILLERS[r % len(FILLERS)]))
            next_id += 1
    return lines


def label_answer(count: int = 40, *, transferable: bool = True) -> str:
    """JSON lines labelling items 1..count (extra items are ignored by the parser)."""
    situations = ("对方表达进展或预期时", "对方抱怨天气时", "对方发起邀约时", "对方求助时")
    actions = ("用简短肯定语确认", "顺着给个建议", "爽快答应", "直接伸出援手")
    rows = [
        {
            "i": i,
            "situation": situations[i % len(situations)],
            "interaction_action": actions[i % len(actions)],
            "intensity": 1 + i % 3,
            "transferable": transferable,
            "outcome": "对方感到被认同",
        }
        for i in range(1, count + 1)
    ]
    return "\n".join(json.dumps(row, ensure_ascii=False) for row in rows)


def is_label_request(system_prompt: str) -> bool:
    return "群聊互动标注员" in system_prompt
