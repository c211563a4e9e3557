"""Injectable time source: decisions take `now` as an argument, services hold a `Clock`."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta, timezone
from typing import Final, Protocol

# how a step waits: `asyncio.sleep` live, a fake clock's advance in tests (one alias for all)
Sleep = Callable[[float], Awaitable[None]]

#: Seconds in a day: the one day-length constant (TTLs, decay ages, day windows).
DAY_S: Final = 86_400.0

# The groups live in China: daily budgets and ledgers roll over at midnight UTC+8.
CHINA_UTC_OFFSET_HOURS = 8.0
CHINA = timezone(timedelta(hours=CHINA_UTC_OFFSET_HOURS), "Asia/Shanghai")


def local_day(now: float, *, utc_offset_hours: float = CHINA_UTC_OFFSET_HOURS) -> str:
    """The ISO date `now` (unix seconds) falls on at the given UTC offset."""
    start, end, day = _last_day.get(utc_offset_hours, _NO_DAY)
    if start <= now < end:  # the day asked for last time (a turn asks ~10 times)
        return day
    local = datetime.fromtimestamp(now, UTC) + timedelta(hours=utc_offset_hours)
    day = local.date().isoformat()
    midnight = local.replace(hour=0, minute=0, second=0, microsecond=0)
    start = (midnight - timedelta(hours=utc_offset_hours)).timestamp()
    _last_day[utc_offset_hours] = (start, start + DAY_S, day)
    return day


_NO_DAY: Final = (0.0, 0.0, "")
_last_day: dict[float, tuple[float, float, str]] = {}  # offset -> [start, end) and its date


class Clock(Protocol):
    def now(self) -> float:
        """Unix seconds."""
        ...


class SystemClock:
    """Wall clock, optionally shifted (`PALLAS_CLOCK_OFFSET_SECONDS`, used by tests/replays)."""

    def __init__(self, offset_seconds: float = 0.0) -> None:
        self.offset_seconds = offset_seconds

    def now(self) -> float:
        return time.time() + self.offset_seconds


class FakeClock:
    """Manually advanced clock for tests."""

    def __init__(self, start: float = 1_760_000_000.0) -> None:
        self._now = start

    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        self._now += seconds

    def set(self, value: float) -> None:
        self._now = value
