"""Repeat rules and the next firing time, in China time (pure).

A rule is stored as one short string: "daily 07:00", "weekdays 08:30", "weekly:5 17:00",
"monthly:31 09:00" (a month without that day fires on its last day), "every:60m".
"""

from __future__ import annotations

import calendar
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Literal

from pallas.features.reminders.clock_words import CHINA_TZ, WEEKDAY_ZH

RepeatKind = Literal["daily", "weekdays", "weekly", "monthly", "every"]


@dataclass(frozen=True, slots=True)
class Repeat:
    kind: RepeatKind
    # weekly: the weekdays 1–7 as digits (5 = Friday, 135 = Monday, Wednesday and Friday);
    # monthly: the day 1–31; every: minutes
    value: int = 0
    hour: int = 9
    minute: int = 0

    @property
    def code(self) -> str:
        """daily / weekdays / weekly:5 / monthly:1 / every:60m (the table's column)."""
        if self.kind in ("weekly", "monthly"):
            return f"{self.kind}:{self.value}"
        if self.kind == "every":
            return f"every:{self.value}m"
        return self.kind

    @property
    def rule(self) -> str:
        """The stored form: the code and, except for `every`, the time of day."""
        if self.kind == "every":
            return self.code
        return f"{self.code} {self.hour:02d}:{self.minute:02d}"

    @property
    def weekdays(self) -> tuple[int, ...]:
        """A weekly rule's weekdays (1 = Monday … 7 = Sunday)."""
        return tuple(sorted({int(d) for d in str(self.value) if d in "1234567"}))

    @property
    def interval_minutes(self) -> int:
        """The shortest gap between two firings."""
        if self.kind == "every":
            return self.value
        return 24 * 60

    def describe(self) -> str:
        """每天 07:00 / 每个工作日 08:30 / 每周五 17:00 / 每月1号 09:00 / 每60分钟."""
        at = f"{self.hour:02d}:{self.minute:02d}"
        if self.kind == "daily":
            return f"每天 {at}"
        if self.kind == "weekdays":
            return f"每个工作日 {at}"
        if self.kind == "weekly":
            return f"每周{'、'.join(WEEKDAY_ZH[d] for d in self.weekdays)} {at}"
        if self.kind == "monthly":
            return f"每月{self.value}号 {at}"
        if self.value % 60 == 0:
            return f"每{self.value // 60}小时"
        return f"每{self.value}分钟"

    @classmethod
    def from_rule(cls, rule: str) -> Repeat | None:
        """The rule back from its stored form; None when it is not one."""
        try:
            code, _, at = rule.strip().partition(" ")
            kind, _, value = code.partition(":")
            if kind == "every":
                return cls("every", int(value.rstrip("m")))
            hour, minute = (int(part) for part in at.split(":"))
            if kind in ("daily", "weekdays"):
                return cls(kind, 0, hour, minute)  # type: ignore[arg-type]
            if kind in ("weekly", "monthly"):
                return cls(kind, int(value), hour, minute)  # type: ignore[arg-type]
        except ValueError:
            return None
        return None


def at_time(day: date, hour: int, minute: int) -> datetime:
    """`day` at hour:minute China time; an hour of 24 or more is on a following day."""
    extra, hour = divmod(hour, 24)
    return datetime(day.year, day.month, day.day, hour, minute, tzinfo=CHINA_TZ) + timedelta(
        days=extra
    )


def _month_day(year: int, month: int, day: int) -> date:
    return date(year, month, min(day, calendar.monthrange(year, month)[1]))


def next_fire(repeat: Repeat, after: datetime) -> datetime:
    """The first firing of `repeat` strictly after `after`."""
    local = after.astimezone(CHINA_TZ)
    if repeat.kind == "every":
        return local + timedelta(minutes=repeat.value)
    today = local.date()
    if repeat.kind == "monthly":
        year, month = today.year, today.month
        for _ in range(3):
            when = at_time(_month_day(year, month, repeat.value), repeat.hour, repeat.minute)
            if when > local:
                return when
            year, month = (year + 1, 1) if month == 12 else (year, month + 1)
        raise AssertionError("unreachable: a month day within three months")
    for offset in range(8):
        day = today + timedelta(days=offset)
        if repeat.kind == "weekdays" and day.isoweekday() > 5:
            continue
        if repeat.kind == "weekly" and day.isoweekday() not in repeat.weekdays:
            continue
        when = at_time(day, repeat.hour, repeat.minute)
        if when > local:
            return when
    raise AssertionError("unreachable: a weekday within eight days")
