"""The interpreter's thread switch interval: how long the event loop may wait for the GIL.

The bot runs the event loop plus a few worker threads (the message writer, aiosqlite's
connection threads, `to_thread` warm-ups). When a worker holds the GIL and the loop thread
wants it, CPython lets the worker run for up to `sys.getswitchinterval()` (5 ms by default)
before forcing a hand-over — every such wait lands in whatever the loop was doing, e.g. a
REPLY turn's local work. A 1 ms interval bounds each wait at 1 ms; the workers are I/O-bound
(SQLite releases the GIL), so the extra switches cost them nothing measurable.
Measured with `python -m benchmarks.reply_turn` (200 turns, alternating runs on a shared
2-core machine): local p90 13.5 / 10.8 ms and p99 20.9 / 19.9 ms at 1 ms against 16.4 / 12.1
and 22.9 / 23.3 ms at 5 ms. `PALLAS_SWITCH_INTERVAL=seconds` sets another value,
`PALLAS_SWITCH_INTERVAL_DEFAULT=1` keeps CPython's (bot.py).
"""

from __future__ import annotations

import logging
import os
import sys

log = logging.getLogger("pallas.core")

SWITCH_INTERVAL_S = 0.001


def tune() -> float:
    """Set the switch interval (before the worker threads start); returns the value set."""
    raw = os.environ.get("PALLAS_SWITCH_INTERVAL", "")
    try:
        interval = float(raw) if raw else SWITCH_INTERVAL_S
    except ValueError:
        log.warning("PALLAS_SWITCH_INTERVAL=%r is not a number; using %s", raw, SWITCH_INTERVAL_S)
        interval = SWITCH_INTERVAL_S
    if interval <= 0:
        interval = SWITCH_INTERVAL_S
    sys.setswitchinterval(interval)
    return interval


__all__ = ["SWITCH_INTERVAL_S", "tune"]
