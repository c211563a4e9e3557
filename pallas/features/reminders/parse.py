"""What a member's addressed line asks of the reminder slice, read by rules (pure).

    明天早上八点提醒我交电费      once    12月7日 08:00, "交电费"
    半小时后叫我收衣服            once    now + 30 min, "收衣服"
    每周五下午提醒大家交周报      repeat  weekly on Friday 15:00, for everyone (admins only)
    过一会儿提醒我收衣服          model   a reminder whose time the rules cannot read
    今天早上七点提醒我吃药        past    the time is gone: asked back
    我的提醒 / 取消提醒 2         list / cancel

`read_request(text, now)` returns None for a line that is no reminder (the memory commands and
the chat answer it): no reminder verb (我明天八点上班), a negated or past one (不用提醒我了,
你提醒我了吗), or 提醒大家 with no time (a notice now, not a promise). The table of phrasings
in `tests/unit/reminders/data/phrasings.tsv` is the specification.

Rules of reading, China time: a part of the day without a clock time takes its default (早上
08:00, 上午 09:00, 中午 12:00, 下午 15:00, 傍晚 18:00, 晚上 20:00); a day without any time
takes 09:00; "N天后" keeps the time of day. A bare 1–11 o'clock with no day is the next of the
two (at 10:30, 十点 is 22:00, 11点 is 11:00); on another day 1–5 o'clock is afternoon. A week
starts on Monday: on a Sunday 下周三 is in three days. A month-day already gone this year is
next year's; a day of the month already gone is next month's. A time with no day that has gone
today is tomorrow's; a time on a named day that has gone is `past`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Literal

from pallas.features.reminders.clock_words import (
    CHINA_TZ,
    CLOCK_RE,
    DAY_WORD_RE,
    DAY_WORDS,
    NUM,
    PERIOD_RE,
    PERIODS,
    WEEKDAYS,
    clock_minutes,
    number,
)
from pallas.features.reminders.schedule import Repeat, at_time, next_fire
from pallas.routing.triggers import command_text

RequestKind = Literal["once", "repeat", "model", "past", "ask", "list", "cancel"]


@dataclass(frozen=True, slots=True)
class ReminderRequest:
    kind: RequestKind
    when: datetime | None = None  # China time: the first firing (once / repeat / past)
    repeat: Repeat | None = None
    what: str = ""
    everyone: bool = False  # 提醒大家: a group-wide notice (admins only)
    cancel: str = ""  # "" (ask which) / "2" / "all"
    reason: str = ""


# ------------------------------------------------------------------ commands and intent

_LIST = re.compile(
    r"^(?:我的提醒(?:有哪些|有什么|列表)?|我(?:都)?有(?:哪些|什么|几个)提醒|查看(?:我的)?提醒"
    r"|提醒列表|看看我的提醒)[\s?？。!！~～]*$"
)
_CANCEL = re.compile(
    rf"^(?:帮我)?取消(?:第(?P<nth>{NUM})(?:个|条))?(?:我的)?提醒(?:[\s#＃]*(?P<num>\d+))?[\s。!！~～]*$"
)
_CANCEL_ALL = re.compile(r"^(?:帮我)?取消(?:我的)?(?:所有|全部)(?:的)?提醒[\s。!！~～]*$")
_NEGATED = re.compile(
    r"(?:不用|别|不要|无需|不必|甭|没)(?:再|总|老)?(?:帮我)?(?:提醒|叫|喊|通知)"
    r"|提醒(?:过|了)|提醒我(?:了|过|的|什么|啥)|会提醒|的提醒|提醒的|提醒功能|提醒(?:怎么|如何)"
)
_VERB = re.compile(
    r"(?P<help>帮我|给我)?(?P<verb>提醒|通知|叫|喊)(?:一下|下)?"
    r"(?P<target>我们|我|大家|所有人|全体成员|全员|全群)?"
)
_ALL = frozenset({"我们", "大家", "所有人", "全体成员", "全员", "全群"})
_FILLER = re.compile(
    r"^(?:记得|记住|请|麻烦|你|能不能|能否|可以|可不可以|帮忙|到时候|到时|的时候|的|再|就|要"
    r"|一定要|务必|[\s,，、:：])*$"
)
_LEAD_JUNK = re.compile(r"^(?:[\s,，、:：。]|一下|一声)+")
_TAIL_JUNK = re.compile(
    r"(?:[\s,，、:：。!！~～?？.]|哦|喔|哈|呀|啊|吧|啦|呢|好吗|好不好|可以吗|行吗|吗|谢谢|谢啦|一次)+$"
)
_ADDRESS_AT = re.compile(r"^@\S+\s*")
_EDGES = " \t\n,，。.!！~～:：、"


def strip_call(text: str, aliases: Iterable[str] = ()) -> str:
    """Drop a leading @name, the call of the bot's name ("牛牛，…", "…，牛牛"; see
    `routing.triggers.command_text`) and edge punctuation."""
    return command_text(_ADDRESS_AT.sub("", text.strip()), aliases).strip(_EDGES)


def read_request(text: str, now: datetime, aliases: Iterable[str] = ()) -> ReminderRequest | None:
    """The reminder request a line makes, or None when it makes none. `now` is China time."""
    body = strip_call(text, aliases)
    if not body or len(body) > 200:
        return None
    if _LIST.match(body):
        return ReminderRequest("list", reason="list")
    if _CANCEL_ALL.match(body):
        return ReminderRequest("cancel", cancel="all", reason="cancel_all")
    cancel = _CANCEL.match(body)
    if cancel is not None:
        nth = cancel.group("nth") or cancel.group("num") or ""
        value = number(nth) if nth else None
        return ReminderRequest("cancel", cancel=str(value) if value else "", reason="cancel")
    if "提醒" not in body and "通知" not in body and "叫" not in body and "喊" not in body:
        return None
    if _NEGATED.search(body):
        return None
    found = find_time(body, now)
    rest = body if found is None else body[: found.start] + body[found.end :]
    for verb in _VERB.finditer(rest):
        target = verb.group("target")
        if not target and not verb.group("help"):
            continue
        if target and target not in _ALL and target != "我":
            continue
        everyone = bool(target) and target in _ALL
        prefix = rest[: verb.start()]
        # "以后叫我小明", "他叫我明天去开会": only a time said first makes 叫我 a reminder
        if verb.group("verb") in ("叫", "喊") and (
            found is None or found.start > verb.start() or not _FILLER.match(prefix)
        ):
            return None
        what = _TAIL_JUNK.sub("", _LEAD_JUNK.sub("", rest[verb.end() :]))
        if found is None and verb.group("verb") != "提醒":
            return None  # "有消息了通知我": no time, no 提醒 — the chat answers it
        return _request(found, what, everyone=everyone)
    return None


def _request(found: FoundTime | None, what: str, *, everyone: bool) -> ReminderRequest | None:
    if found is None:
        if everyone:  # 提醒大家注意安全: a notice now, nothing to keep
            return None
        return ReminderRequest("model", what=what, reason="time_unread")
    if found.problem:
        return ReminderRequest("ask", what=what, everyone=everyone, reason=found.problem)
    if found.past:
        return ReminderRequest(
            "past", when=found.when, what=what, everyone=everyone, reason="time_past"
        )
    kind: RequestKind = "repeat" if found.repeat is not None else "once"
    return ReminderRequest(
        kind, when=found.when, repeat=found.repeat, what=what, everyone=everyone, reason="rules"
    )


# ------------------------------------------------------------------ time expressions


@dataclass(frozen=True, slots=True)
class FoundTime:
    start: int
    end: int
    when: datetime | None = None
    repeat: Repeat | None = None
    past: bool = False
    problem: str = ""  # "" or why the time cannot be (bad_clock, bad_date)


_WEEK = r"(?:周|星期|礼拜)"
_WD = r"[一二三四五六日天1-7]"
_REPEAT = re.compile(
    r"(?P<daily>每一?天|每日|天天)|(?P<nightly>每晚)|(?P<mornings>每早)"
    rf"|(?P<weekdays>(?:每个)?工作日|每?{_WEEK}一(?:到|至|~|～|-|－){_WEEK}?五)"
    rf"|每个?{_WEEK}(?P<wd>{_WD}(?:[和、,，及跟与]?{_WEEK}?{_WD})*)"
    rf"|每个?月(?P<md>{NUM})(?:号|日)"
    rf"|每隔?(?P<n>{NUM})?个?(?P<half>半)?个?(?:小时|钟头)"
    rf"|每隔?(?P<mins>{NUM})分钟"
)
_RELATIVE = re.compile(
    rf"(?P<pre>过)?(?:(?P<d>{NUM})(?:天|日)|(?P<w>{NUM})个?(?:周|星期|礼拜)"
    rf"|(?:(?P<h>{NUM}|半)个?(?P<hh>半)?(?:小时|钟头))?(?:(?P<m>{NUM})分钟?|(?P<q>一刻钟))?)"
    r"(?P<post>以后|之后|后)?"
)
_DATE = re.compile(
    rf"(?P<word>{DAY_WORD_RE})"
    rf"|(?:(?P<y>\d{{4}})年|(?P<yw>今年|明年|后年))?(?P<mo>{NUM})月(?P<md>{NUM})(?:日|号)?"
    rf"|(?P<mrel>下个?|这个?|本)月(?P<mday>{NUM})(?:号|日)"
    r"|(?P<iy>\d{4})-(?P<im>\d{1,2})-(?P<id>\d{1,2})"
    r"|(?P<dm>\d{1,2})\.(?P<dd>\d{1,2})(?!\d)"
    r"|(?P<wkp>下下个?|下个?|这个?|本)?(?:周|星期|礼拜)(?P<wd>[一二三四五六日天1-7])"
    rf"|(?P<dom>{NUM})(?:号|日)"
)
_TOD = re.compile(rf"(?P<period>{PERIOD_RE})?(?P<clock>{CLOCK_RE})?")
_THIS_TIME = ("这个时候", "这个时间", "这个点", "这时候")  # 明天这个时候: now's time of day
_YEARS = {"今年": 0, "明年": 1, "后年": 2}


def find_time(body: str, now: datetime) -> FoundTime | None:
    """The first time expression in `body`, resolved against `now` (China time)."""
    for i in range(len(body)):
        if i and body[i - 1].isdigit():
            continue
        found = _repeat_at(body, i, now) or _relative_at(body, i, now) or _absolute_at(body, i, now)
        if found is not None:
            return found
    return None


def _tod(body: str, pos: int) -> tuple[str, tuple[int, int] | None, bool, int]:
    """(period, clock, clock_ok, end) of the part of the day / clock time at `pos`."""
    match = _TOD.match(body, pos)
    if match is None or match.end() == pos:
        return "", None, True, pos
    period = match.group("period") or ""
    clock = clock_minutes(match) if match.group("clock") else None
    ok = not match.group("clock") or clock is not None
    return period, clock, ok, match.end()


def _this_time(body: str, end: int) -> int:
    """The end of a "这个时候" at `end` (`end` itself when there is none)."""
    for words in _THIS_TIME:
        if body.startswith(words, end):
            return end + len(words)
    return end


def _hour_in(period: str, hour: int, minute: int) -> int | None:
    """The 0–47 hour a clock time in a part of the day means (≥ 24: the next day); None when
    the two contradict (早上13点)."""
    if minute >= 60 or hour > 24:
        return None
    kind = PERIODS[period][1]
    if kind == "am":
        return hour if hour <= 12 else None
    if kind == "noon":
        return hour if hour in (11, 12) else hour + 12 if 1 <= hour <= 3 else None
    if kind == "pm":
        return hour + 12 if 1 <= hour < 12 else hour if 12 <= hour <= 23 else None
    if kind == "night":
        if 5 <= hour < 12:
            return hour + 12
        if hour in (0, 12, 24):
            return 24
        if 1 <= hour <= 4:
            return 24 + hour
        return hour if 13 <= hour <= 23 else None
    return 0 if hour in (0, 12, 24) else hour if hour <= 6 else None  # 凌晨 / 半夜


def _time_of_day(
    period: str, clock: tuple[int, int] | None, *, other_day: bool
) -> tuple[int, int] | str:
    """(hour 0–47, minute) for a part of the day and a clock time on a named day (or in a
    repeat); a string names the problem. A bare 1–11 on another day: 1–5 pm, 6–11 am."""
    if clock is None:
        if period:
            default = PERIODS[period][0]
            return default if default is not None else "bad_clock"
        return 9, 0
    hour, minute = clock
    if period:
        resolved = _hour_in(period, hour, minute)
        return (resolved, minute) if resolved is not None else "bad_clock"
    if minute >= 60 or hour > 24:
        return "bad_clock"
    if other_day and 1 <= hour <= 5:
        return hour + 12, minute
    return hour, minute


def _repeat_at(body: str, i: int, now: datetime) -> FoundTime | None:
    match = _REPEAT.match(body, i)
    if match is None:
        return None
    end = match.end()
    if (
        match.group("n")
        or match.group("half")
        or match.group("mins")
        or (match.group(0).endswith(("小时", "钟头")))
    ):
        if match.group("mins"):
            minutes = number(match.group("mins")) or 0
        elif match.group("half") and not match.group("n"):
            minutes = 30
        else:
            hours = number(match.group("n") or "1") or 0
            minutes = hours * 60 + (30 if match.group("half") else 0)
        if minutes <= 0:
            return FoundTime(i, end, problem="bad_clock")
        repeat = Repeat("every", minutes)
        return FoundTime(i, end, when=next_fire(repeat, now), repeat=repeat)
    period, clock, ok, end = _tod(body, end)
    if match.group("nightly"):
        period = period or "晚上"
    if match.group("mornings"):
        period = period or "早上"
    resolved: tuple[int, int] | str
    if not period and clock is None and (after := _this_time(body, end)) != end:
        end, resolved = after, (now.hour, now.minute)
    else:
        resolved = _time_of_day(period, clock, other_day=True) if ok else "bad_clock"
    if isinstance(resolved, str) or resolved[0] >= 24:
        return FoundTime(i, end, problem="bad_clock")
    hour, minute = resolved
    if match.group("wd"):
        days = sorted({WEEKDAYS[c] for c in match.group("wd") if c in WEEKDAYS})
        repeat = Repeat("weekly", int("".join(map(str, days))), hour, minute)
    elif match.group("weekdays"):
        repeat = Repeat("weekdays", 0, hour, minute)
    elif match.group("md"):
        day = number(match.group("md")) or 0
        if not 1 <= day <= 31:
            return FoundTime(i, end, problem="bad_date")
        repeat = Repeat("monthly", day, hour, minute)
    else:
        repeat = Repeat("daily", 0, hour, minute)
    return FoundTime(i, end, when=next_fire(repeat, now), repeat=repeat)


def _relative_at(body: str, i: int, now: datetime) -> FoundTime | None:
    match = _RELATIVE.match(body, i)
    if match is None or not (match.group("pre") or match.group("post")):
        return None
    groups = match.groupdict()
    if not any(groups[k] for k in ("d", "w", "h", "m", "q")):
        return None
    end = match.end()
    if groups["d"] or groups["w"]:
        days = number(groups["d"] or "") if groups["d"] else (number(groups["w"]) or 0) * 7
        if not days:
            return None
        day = now.date() + timedelta(days=days)
        period, clock, ok, end = _tod(body, end)
        if not period and clock is None:
            return FoundTime(i, end, when=now + timedelta(days=days))
        resolved = _time_of_day(period, clock, other_day=True) if ok else "bad_clock"
        if isinstance(resolved, str):
            return FoundTime(i, end, problem=resolved)
        return FoundTime(i, end, when=at_time(day, *resolved))
    minutes = 0
    if groups["h"]:
        hours = 0.5 if groups["h"] == "半" else float(number(groups["h"]) or 0)
        minutes += int(hours * 60) + (30 if groups["hh"] else 0)
    if groups["m"]:
        minutes += number(groups["m"]) or 0
    if groups["q"]:
        minutes += 15
    if minutes <= 0:
        return None
    return FoundTime(i, end, when=now + timedelta(minutes=minutes))


def _absolute_at(body: str, i: int, now: datetime) -> FoundTime | None:
    match = _DATE.match(body, i)
    pos = match.end() if match is not None else i
    period, clock, ok, end = _tod(body, pos)
    if match is None:
        if not period and clock is None:
            return None
        if period in ("早", "晚") and clock is None:  # 晚点 / 早点: no time
            return None
    if not ok:
        return FoundTime(i, end, problem="bad_clock")
    today = now.date()
    if match is None:
        return _undated(i, end, period, clock, now)
    groups = match.groupdict()
    day: date | None
    explicit, weekday_next = True, False
    try:
        if groups["word"]:
            offset, implied = DAY_WORDS[groups["word"]]
            day = today + timedelta(days=offset)
            period = period or implied
            if offset == 0 and not period and clock is not None:
                return _undated(i, end, period, clock, now, explicit=True)
        elif groups["mo"]:
            month, mday = number(groups["mo"]) or 0, number(groups["md"]) or 0
            named = groups["y"] or groups["yw"]
            year = int(groups["y"]) if groups["y"] else today.year + _YEARS.get(groups["yw"], 0)
            day = date(year, month, mday)
            if not named and day < today:
                day = date(year + 1, month, mday)
        elif groups["mrel"]:
            mday = number(groups["mday"]) or 0
            year, month = today.year, today.month
            if groups["mrel"].startswith("下"):
                year, month = (year + 1, 1) if month == 12 else (year, month + 1)
            day = date(year, month, mday)
        elif groups["iy"]:
            day = date(int(groups["iy"]), int(groups["im"]), int(groups["id"]))
        elif groups["dm"]:
            day = date(today.year, int(groups["dm"]), int(groups["dd"]))
            if day < today:
                day = date(today.year + 1, day.month, day.day)
        elif groups["wd"]:
            weekday = WEEKDAYS[groups["wd"]]
            prefix = (groups["wkp"] or "").rstrip("个")
            monday = today - timedelta(days=today.isoweekday() - 1)
            if prefix in ("这", "本"):
                day = monday + timedelta(days=weekday - 1)
            elif prefix == "下":
                day = monday + timedelta(days=7 + weekday - 1)
            elif prefix == "下下":
                day = monday + timedelta(days=14 + weekday - 1)
            else:
                day = today + timedelta(days=(weekday - today.isoweekday()) % 7)
                explicit, weekday_next = False, True
        else:
            mday = number(groups["dom"]) or 0
            day = _month_day(today, mday)
    except ValueError:
        return FoundTime(i, end, problem="bad_date")
    if day is None:
        return FoundTime(i, end, problem="bad_date")
    resolved: tuple[int, int] | str
    if not period and clock is None and (after := _this_time(body, end)) != end:
        end, resolved = after, (now.hour, now.minute)
    else:
        resolved = _time_of_day(period, clock, other_day=day != today or weekday_next)
    if isinstance(resolved, str):
        return FoundTime(i, end, problem=resolved)
    when = at_time(day, *resolved)
    if weekday_next and when <= now:
        when += timedelta(days=7)
    if explicit and when <= now:
        return FoundTime(i, end, when=when, past=True)
    return FoundTime(i, end, when=when)


def _month_day(today: date, mday: int) -> date | None:
    """The next "N号": this month's when it has not gone, else next month's."""
    if not 1 <= mday <= 31:
        return None
    year, month = today.year, today.month
    for _ in range(12):
        try:
            day = date(year, month, mday)
        except ValueError:
            day = None
        if day is not None and day >= today:
            return day
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return None


def _undated(
    i: int,
    end: int,
    period: str,
    clock: tuple[int, int] | None,
    now: datetime,
    *,
    explicit: bool = False,
) -> FoundTime:
    """A clock time or part of the day with no day (or 今天 with a bare clock time): the
    next one; a bare 1–11 o'clock is the next of its morning and evening."""
    today = now.date()
    if clock is not None and not period:
        hour, minute = clock
        if minute >= 60 or hour > 24:
            return FoundTime(i, end, problem="bad_clock")
        candidates = [hour, hour + 12] if 1 <= hour <= 11 else [hour]
        for candidate in candidates:
            when = at_time(today, candidate, minute)
            if when > now:
                return FoundTime(i, end, when=when)
        when = at_time(today, candidates[-1], minute)
        if explicit:
            return FoundTime(i, end, when=when, past=True)
        return FoundTime(i, end, when=at_time(today + timedelta(days=1), hour, minute))
    resolved = _time_of_day(period, clock, other_day=False)
    if isinstance(resolved, str):
        return FoundTime(i, end, problem=resolved)
    when = at_time(today, *resolved)
    if when <= now:
        when += timedelta(days=1)
    return FoundTime(i, end, when=when)


__all__ = ["CHINA_TZ", "FoundTime", "ReminderRequest", "find_time", "read_request", "strip_call"]
