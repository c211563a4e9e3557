"""Rate-limited log lines: hostile input must cost one line, not fill the disk.

A peer can send thousands of malformed frames a minute; each is worth knowing about, but the
operator needs the first few of each kind and a count of the rest. `LogLimiter.allow(key)`
says whether to log a line of that kind now and how many of its kind were skipped since the
last one logged (to append to it).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from cachetools import FIFOCache


@dataclass
class _Window:
    started: float
    logged: int = 0
    skipped: int = 0


class LogLimiter:
    def __init__(
        self,
        *,
        per_window: int = 5,
        window_s: float = 60.0,
        max_keys: int = 256,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._per_window = per_window
        self._window_s = window_s
        self._clock = clock
        # the kind seen least recently goes first (FIFOCache: a key set again moves last)
        self._windows: FIFOCache[str, _Window] = FIFOCache(max_keys)

    def allow(self, key: str) -> tuple[bool, int]:
        """(log this line?, lines of this kind skipped before it and not yet reported)."""
        now = self._clock()
        window = self._windows.get(key)
        if window is None:
            self._windows[key] = _Window(now, logged=1)
            return True, 0
        if now - window.started >= self._window_s:  # a new window, in the old one's place
            skipped = window.skipped
            window.started, window.logged, window.skipped = now, 1, 0
            return True, skipped
        self._windows[key] = window
        if window.logged < self._per_window:
            window.logged += 1
            skipped, window.skipped = window.skipped, 0
            return True, skipped
        window.skipped += 1
        return False, 0


def skipped_note(skipped: int) -> str:
    return f" ({skipped} more like it not logged)" if skipped else ""
