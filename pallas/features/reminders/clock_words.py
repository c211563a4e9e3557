"""Chinese time words, read by rules (pure): numerals, day words, parts of the day, clock times.

China time is read with `zoneinfo` (Asia/Shanghai: no daylight saving, so every day has 24 h).
"""

from __future__ import annotations

import re
from datetime import datetime, tzinfo
from zoneinfo import ZoneInfo

from pallas.core.clock import CHINA


def _china_zone() -> tzinfo:
    try:
        return ZoneInfo("Asia/Shanghai")
    except Exception:  # no tz database on the host: the fixed +08:00 is the same for China
        return CHINA


CHINA_TZ = _china_zone()

NUM = r"[0-9零〇一二两俩三四五六七八九十百]+"

_DIGITS = {
    "零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "俩": 2, "三": 3, "四": 4, "五": 5,
    "六": 6, "七": 7, "八": 8, "九": 9,
}  # fmt: skip


def number(text: str) -> int | None:
    """ "12" / "十二" / "二十三" / "两" / "一百" → int; None when it is no number."""
    if not text:
        return None
    if text.isdigit():
        return int(text)
    total, current = 0, 0
    for char in text:
        if char in _DIGITS:
            current = _DIGITS[char]
        elif char == "十":
            total += (current or 1) * 10
            current = 0
        elif char == "百":
            total += (current or 1) * 100
            current = 0
        elif char.isdigit():
            current = current * 10 + int(char)
        else:
            return None
    return total + current


WEEKDAYS = {
    "一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "日": 7, "天": 7,
    "1": 1, "2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7,
}  # fmt: skip
WEEKDAY_ZH = ("", "一", "二", "三", "四", "五", "六", "日")

# part of the day → (its default clock time, how a 1–12 hour reads in it)
PERIODS: dict[str, tuple[tuple[int, int] | None, str]] = {
    "早上": ((8, 0), "am"),
    "早晨": ((8, 0), "am"),
    "清晨": ((7, 0), "am"),
    "早": ((8, 0), "am"),
    "上午": ((9, 0), "am"),
    "中午": ((12, 0), "noon"),
    "下午": ((15, 0), "pm"),
    "午后": ((15, 0), "pm"),
    "傍晚": ((18, 0), "pm"),
    "晚上": ((20, 0), "night"),
    "夜里": ((21, 0), "night"),
    "晚": ((20, 0), "night"),
    "凌晨": (None, "small"),
    "半夜": (None, "small"),
}
PERIOD_RE = "|".join(sorted(PERIODS, key=len, reverse=True))

# day words: offset in days, and the part of the day they carry (今晚 = 今天 + 晚上)
DAY_WORDS: dict[str, tuple[int, str]] = {
    "大后天": (3, ""),
    "后天": (2, ""),
    "明天": (1, ""),
    "明日": (1, ""),
    "明早": (1, "早上"),
    "明晚": (1, "晚上"),
    "今天": (0, ""),
    "今日": (0, ""),
    "今早": (0, "早上"),
    "今晚": (0, "晚上"),
    "昨天": (-1, ""),
    "昨晚": (-1, "晚上"),
    "前天": (-2, ""),
}
DAY_WORD_RE = "|".join(sorted(DAY_WORDS, key=len, reverse=True))

CLOCK_RE = (
    rf"(?P<h>{NUM})(?:(?:点钟|点|时)(?:(?P<half>半)|(?P<q1>一刻)|(?P<q3>三刻)|(?P<m>{NUM})分?)?"
    r"|[:：](?P<mm>\d{2}))"
)
CLOCK = re.compile(CLOCK_RE)


def clock_minutes(match: re.Match[str]) -> tuple[int, int] | None:
    """(hour, minute) of a CLOCK match, None when it is no number."""
    hour = number(match.group("h"))
    if hour is None:
        return None
    if match.group("half"):
        return hour, 30
    if match.group("q1"):
        return hour, 15
    if match.group("q3"):
        return hour, 45
    minute_text = match.group("m") or match.group("mm")
    if minute_text:
        minute = number(minute_text)
        return None if minute is None else (hour, minute)
    return hour, 0


def china_now(now: float) -> datetime:
    return datetime.fromtimestamp(now, CHINA_TZ)


def format_when(when: datetime) -> str:
    """12月7日（周一）08:00 — the exact time a confirmation names (China time)."""
    local = when.astimezone(CHINA_TZ)
    return f"{local.month}月{local.day}日（周{WEEKDAY_ZH[local.isoweekday()]}）{local:%H:%M}"
