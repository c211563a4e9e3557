"""Date counting in China time: "距离2027年1月1日还有几天", "离12月25日还有多少天",
"还有几天到元旦", "100天后是几号", "3天前是星期几", "how many days until 2027-01-01",
"100 days from now".

Fires only when the whole message is such a question about a concrete date — a year-month-day, a
month-day (the next occurrence; today counts as 0 days), or a fixed-date holiday (元旦, 情人节,
劳动节, 国庆, 圣诞 …) — or about an offset of N days. Lunar holidays (春节, 中秋, 端午 …) are not
known and do NOT fire, and neither do "还有几天就放假了好开心", "距离考试还有几天", "100天后我就
毕业了", "三天前我去了北京", "距离产生美" or "今天星期几" (the current time is a separate block).
Invalid dates (2月30日) → ok=False; offsets are capped at 36500 days.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

from pallas.core.clock import local_day
from pallas.features.tools._text import CN_NUMBER, compact_request, parse_number
from pallas.features.tools.base import ToolCall, ToolEnv, ToolOutput, failure, success

MAX_OFFSET_DAYS = 36_500
WEEKDAYS = ("星期一", "星期二", "星期三", "星期四", "星期五", "星期六", "星期日")

# Gregorian fixed-date holidays only: lunar ones move every year and are not guessed.
HOLIDAYS: dict[str, tuple[int, int]] = {
    "元旦": (1, 1),
    "新年": (1, 1),
    "情人节": (2, 14),
    "妇女节": (3, 8),
    "植树节": (3, 12),
    "愚人节": (4, 1),
    "劳动节": (5, 1),
    "五一": (5, 1),
    "青年节": (5, 4),
    "儿童节": (6, 1),
    "六一": (6, 1),
    "建党节": (7, 1),
    "建军节": (8, 1),
    "教师节": (9, 10),
    "国庆节": (10, 1),
    "国庆": (10, 1),
    "十一": (10, 1),
    "万圣节": (10, 31),
    "双十一": (11, 11),
    "光棍节": (11, 11),
    "双十二": (12, 12),
    "平安夜": (12, 24),
    "圣诞节": (12, 25),
    "圣诞": (12, 25),
    "christmas": (12, 25),
    "new year": (1, 1),
    "new year's day": (1, 1),
    "halloween": (10, 31),
}
# How an English holiday name is shown in the (Chinese) result.
_HOLIDAY_DISPLAY = {
    "christmas": "圣诞节",
    "new year": "元旦",
    "new year's day": "元旦",
    "halloween": "万圣节",
}

_NUM = CN_NUMBER
_CN_DATE = (
    rf"(?:(?P<year>\d{{4}})\s*年\s*)?(?P<month>{_NUM})\s*月\s*(?P<day>{_NUM})\s*(?:日|号)?"
    r"|(?P<iso_year>\d{4})\s*[-/.]\s*(?P<iso_month>\d{1,2})\s*[-/.]\s*(?P<iso_day>\d{1,2})"
)
_HOLIDAY = "|".join(sorted(map(re.escape, HOLIDAYS), key=len, reverse=True))
_TARGET = rf"(?:{_CN_DATE}|(?P<holiday>{_HOLIDAY}))"
_HOW_MANY_DAYS = r"(?:还有|还剩|有|还差|差)(?:几|多少)(?:天|日)"
_LEAD = r"(?:请问|问一下|你知道|帮我算算|帮我看看|算一下|算算)?"

_UNTIL_PATTERNS = tuple(
    re.compile(pattern)
    for pattern in (
        # 距离2027年1月1日还有几天 / 离元旦还有多少天 / 今天到圣诞节还有几天 / 国庆还有几天.
        rf"{_LEAD}(?:距离|距|离|(?:从)?今天(?:距离|离|到)|现在(?:距离|离|到))?\s*{_TARGET}\s*"
        rf"(?:的话)?{_HOW_MANY_DAYS}",
        # 还有几天到元旦 / 还有多少天是12月25日 / 还有几天过圣诞.
        rf"{_LEAD}{_HOW_MANY_DAYS}(?:到|就到|才到|是|过)\s*{_TARGET}",
        # how many days until 2027-01-01 / days till christmas.
        rf"(?:how\s+many\s+)?days\s+(?:left\s+)?(?:until|till|to|before)\s+{_TARGET}",
    )
)
_DIRECTION = r"(?P<direction>后|以后|之后|前|以前|之前)"
_WHICH_DAY = (
    r"(?:是)?(?:几号|几月几号|几月几日|几月几号星期几|哪天|哪一天|什么日子|什么时候"
    r"|星期几|周几|礼拜几)"
)
_OFFSET_PATTERNS = tuple(
    re.compile(pattern)
    for pattern in (
        # 100天后是几号 / 三天前是星期几 / 从今天起100天后是哪天.
        rf"{_LEAD}(?:从今天(?:起|开始)?(?:往后|往前)?(?:数|算)?)?\s*(?P<days>{_NUM})\s*天\s*"
        rf"{_DIRECTION}\s*{_WHICH_DAY}",
        # 再过100天是几号.
        rf"{_LEAD}再?过\s*(?P<days>{_NUM})\s*天\s*{_WHICH_DAY}",
        # what date is it 100 days from now / 3 days ago.
        r"(?:what\s+(?:date|day)\s+(?:is\s+it|was\s+it|will\s+it\s+be|is|was)\s+)?"
        r"(?P<days>\d{1,9})\s+days?\s+(?P<en_direction>from\s+now|later|ago)",
    )
)


class CountdownTool:
    name = "countdown"
    label = "日期计算"

    def match(self, text: str) -> ToolCall | None:
        compact = compact_request(text)
        for pattern in _UNTIL_PATTERNS:
            found = pattern.fullmatch(compact)
            if found:
                return ToolCall(self.name, _until_args(found), found.group(0))
        for pattern in _OFFSET_PATTERNS:
            found = pattern.fullmatch(compact)
            if found:
                return ToolCall(self.name, _offset_args(found), found.group(0))
        return None

    async def run(self, call: ToolCall, env: ToolEnv) -> ToolOutput:
        today = date.fromisoformat(local_day(env.now))
        if call.arg("mode") == "offset":
            return self._offset(call, today)
        return self._until(call, today)

    def _until(self, call: ToolCall, today: date) -> ToolOutput:
        month, day = _int(call.arg("month")), _int(call.arg("day"))
        year = _int(call.arg("year")) if call.arg("year") else None
        target = _resolve(year, month, day, today)
        if target is None:
            return failure(self, "invalid_date", f"{_spelled(year, month, day)}不是有效的日期")
        days = (target - today).days
        if abs(days) > MAX_OFFSET_DAYS:
            return failure(self, "out_of_range", f"日期太远了，最多算 {MAX_OFFSET_DAYS} 天以内")
        return success(self, _until_content(today, target, days, call.arg("holiday")))

    def _offset(self, call: ToolCall, today: date) -> ToolOutput:
        days = _int(call.arg("days"))
        if days < 0:
            return failure(self, "bad_offset", "天数看不懂")
        if days > MAX_OFFSET_DAYS:
            return failure(self, "out_of_range", f"天数太多了，最多算 {MAX_OFFSET_DAYS} 天")
        sign = -1 if call.arg("direction") == "before" else 1
        target = today + timedelta(days=sign * days)
        word = "前" if sign < 0 else "后"
        return success(self, f"今天是{_full(today)}，{days}天{word}是{_full(target)}")


def _until_args(found: re.Match[str]) -> tuple[tuple[str, str], ...]:
    g = found.groupdict()
    if g.get("holiday"):
        h_month, h_day = HOLIDAYS[g["holiday"]]
        return (("mode", "until"), ("month", str(h_month)), ("day", str(h_day)),
                ("holiday", _HOLIDAY_DISPLAY.get(g["holiday"], g["holiday"])))  # fmt: skip
    year = g.get("year") or g.get("iso_year") or ""
    month = _numeral(g.get("month") or g.get("iso_month") or "")
    day = _numeral(g.get("day") or g.get("iso_day") or "")
    return (("mode", "until"), ("year", year), ("month", month), ("day", day))


def _offset_args(found: re.Match[str]) -> tuple[tuple[str, str], ...]:
    g = found.groupdict()
    before = (g.get("direction") or "").endswith("前") or g.get("en_direction") == "ago"
    direction = "before" if before else "after"
    return (("mode", "offset"), ("days", _numeral(g.get("days") or "")), ("direction", direction))


def _numeral(token: str) -> str:
    value = parse_number(token)
    return "" if value is None else str(value)


def _int(value: str) -> int:
    return int(value) if value.isdigit() and len(value) <= 9 else -1


def _resolve(year: int | None, month: int, day: int, today: date) -> date | None:
    """The date asked for; without a year, its next occurrence from today (Feb 29 → leap year)."""
    if year is not None:
        return _date(year, month, day)
    for candidate_year in range(today.year, today.year + 9):
        candidate = _date(candidate_year, month, day)
        if candidate is not None and candidate >= today:
            return candidate
    return None


def _date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _until_content(today: date, target: date, days: int, holiday: str) -> str:
    name = f"{holiday}（{_plain(target)}，{_weekday(target)}）" if holiday else _full(target)
    if days == 0:
        return f"今天就是{name}，还有0天"
    head = f"今天是{_full(today)}"
    if days < 0:
        return f"{head}，{name}已经过去{-days}天了"
    return f"{head}，距离{name}还有{days}天"


def _full(day: date) -> str:
    return f"{_plain(day)}（{_weekday(day)}）"


def _plain(day: date) -> str:
    return f"{day.year}年{day.month}月{day.day}日"


def _weekday(day: date) -> str:
    return WEEKDAYS[day.weekday()]


def _spelled(year: int | None, month: int, day: int) -> str:
    head = f"{year}年" if year is not None else ""
    return f"{head}{month}月{day}日"
