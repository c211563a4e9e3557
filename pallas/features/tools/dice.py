"""Dice and coins: "掷骰子", "扔个骰子", "掷3个骰子", "投个d100", "roll 2d6", "/roll d20", "抛硬币".

Fires only when the whole message is the request, optionally with a polite lead-in (帮我 / 给我 /
请 / 来 / 再 …) and a trailing 吧 / 看看 / 试试: "帮我掷个骰子吧" fires, while "骰子游戏好玩吗",
"我昨天掷骰子输了", "我的骰子丢了", "硬币收藏" or "rolling in the deep" do not.
Limits: at most 20 dice of at most 1000 faces (default 1d6); over the limit → ok=False.
Randomness comes from `env.rng` only.
"""

from __future__ import annotations

import re

from pallas.features.tools._text import CN_NUMBER, compact_request, parse_number
from pallas.features.tools.base import ToolCall, ToolEnv, ToolOutput, failure, success

MAX_DICE = 20
MAX_FACES = 1000
DEFAULT_FACES = 6

_LEAD = r"(?:帮我|给我|替我|请|麻烦|帮忙|你|那|那就|我要|我想|来|再|先|随便|随机)*"
_TAIL = r"(?:一下|一次|一把|一轮|看看|试试|玩玩|康康|瞧瞧)?"
_QUANTITY = rf"(?:(?P<count>{CN_NUMBER})(?:个|颗|枚|次)|一?个|一?颗|一?枚|一下)?"
_NOTATION = r"(?P<ncount>\d{1,9})?d(?P<faces>\d{1,9})"
_DIE = rf"(?:骰子|色子|骰|{_NOTATION})"

_DICE_PATTERNS = tuple(
    re.compile(pattern)
    for pattern in (
        # Chinese: verb (掷 / 扔 / 丢 / 投 / 摇 / 抛 / 甩) + quantity + die.
        rf"{_LEAD}(?:掷|扔|丢|投|摇|抛|甩|roll)\s*{_QUANTITY}\s*{_DIE}\s*{_TAIL}",
        # Chinese: 来 / 整 + quantity + dice notation (来个d20, 整两个d6).
        rf"{_LEAD}(?:来|整)\s*{_QUANTITY}\s*{_NOTATION}\s*{_TAIL}",
        # English: roll, roll 2d6, /roll d20, roll a die, roll the dice, roll 3 dice, /r 3d8.
        rf"(?:please\s+)?/?roll(?:\s+{_NOTATION})?(?:\s+please)?",
        r"(?:please\s+)?/?roll\s+(?:(?:a|the|one)\s+)?(?:die|dice)(?:\s+please)?",
        r"(?:please\s+)?/?roll\s+(?P<count>\d{1,9})\s+(?:die|dice)(?:\s+please)?",
        rf"/r\s*{_NOTATION}",
    )
)
_COIN_RE = re.compile(
    rf"{_LEAD}(?:抛|丢|扔|掷|投|弹|翻)\s*(?:一?个|一?枚|一下)?\s*硬币\s*{_TAIL}"
    r"|(?:please\s+)?(?:flip|toss)\s+(?:a|one|the)\s+coin(?:\s+please)?|coin\s*flip|heads\s+or\s+tails"
)


class DiceTool:
    name = "dice"
    label = "掷骰子"
    coin_label = "抛硬币"

    def match(self, text: str) -> ToolCall | None:
        compact = compact_request(text)
        coin = _COIN_RE.fullmatch(compact)
        if coin:
            return ToolCall(self.name, (("kind", "coin"),), coin.group(0))
        dice = next((m for p in _DICE_PATTERNS if (m := p.fullmatch(compact))), None)
        if dice is None:
            return None
        count, faces = _dice_spec(dice)
        args = (("kind", "dice"), ("count", str(count)), ("faces", str(faces)))
        return ToolCall(self.name, args, dice.group(0))

    async def run(self, call: ToolCall, env: ToolEnv) -> ToolOutput:
        if call.arg("kind") == "coin":
            side = "正面" if env.rng.random() < 0.5 else "反面"
            return success(self, f"抛硬币：{side}", label=self.coin_label)
        count = _int_arg(call.arg("count", "1"))
        faces = _int_arg(call.arg("faces", str(DEFAULT_FACES)))
        problem = _limit_problem(count, faces)
        if problem is not None:
            return failure(self, *problem)
        rolls = [env.rng.randint(1, faces) for _ in range(count)]
        return success(self, _describe(count, faces, rolls))


def _dice_spec(found: re.Match[str]) -> tuple[int, int]:
    groups = found.groupdict()
    count_token = groups.get("ncount") or groups.get("count") or "1"
    faces_token = groups.get("faces") or str(DEFAULT_FACES)
    count = parse_number(count_token)
    faces = parse_number(faces_token)
    return (1 if count is None else count), (DEFAULT_FACES if faces is None else faces)


def _int_arg(value: str) -> int:
    return int(value) if value.isdigit() and len(value) <= 9 else -1


def _limit_problem(count: int, faces: int) -> tuple[str, str] | None:
    if count < 1:
        return "bad_count", "骰子个数得是 1 到 20 之间的整数"
    if count > MAX_DICE:
        return "too_many_dice", f"一次最多掷 {MAX_DICE} 个骰子，{count} 个太多啦"
    if faces < 2:
        return "bad_faces", "骰子至少要有 2 个面"
    if faces > MAX_FACES:
        return "too_many_faces", f"骰子最多 {MAX_FACES} 面，{faces} 面的骰子做不出来"
    return None


def _describe(count: int, faces: int, rolls: list[int]) -> str:
    notation = f"{count}d{faces}"
    if count == 1:
        return f"{notation} 掷出 {rolls[0]}"
    return f"{notation} 掷出 {' + '.join(map(str, rolls))} = {sum(rolls)}"
