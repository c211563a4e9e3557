"""Garbage-collector settings for a long-running bot: no full collection on the reply path.

CPython's cyclic collector stops the event loop while it runs. A full (generation 2)
collection walks every tracked object of the process — start-up's imports, the NoneBot /
SQLAlchemy / openai object graphs, the warm caches — and measured 170–210 ms with the
reply-turn benchmark's heap (`python -m benchmarks.reply_turn`, its "gc" lines): one of those
inside a REPLY turn (or an @'s ingest) is the whole tail.

`settle()` runs once start-up is done (app built, warm-ups loaded): one full collection while
nothing waits, then `gc.freeze()` — the start-up heap moves to the permanent generation, which
later collections never walk, and the next full collection is due only when the heap has grown
by a quarter of that size again. Frozen objects are still freed by reference counting; only a
reference cycle among them would stay (start-up objects live for the whole process anyway).
With it, 300 benchmark turns saw no full collection at all.

The young thresholds stay CPython's (700, 10, 10): raising them (5,000 or 20,000 allocations)
was measured too — fewer but 10–13 ms young collections instead of ~0.3 ms ones, a worse tail.
`PALLAS_GC_THRESHOLDS=a,b,c` sets others (for such measurements); `PALLAS_GC_DEFAULTS=1` skips
the freeze (to compare).
"""

from __future__ import annotations

import gc
import logging
import os
import time

log = logging.getLogger("pallas.core")


def enabled() -> bool:
    return not os.environ.get("PALLAS_GC_DEFAULTS")


def tune() -> None:
    """Apply `PALLAS_GC_THRESHOLDS` when set (CPython's thresholds otherwise)."""
    raw = os.environ.get("PALLAS_GC_THRESHOLDS", "")
    try:
        a, b, c = (int(x) for x in raw.split(","))
    except ValueError:
        return
    gc.set_threshold(a, b, c)


def settle() -> float:
    """After start-up: collect once, then freeze what survived. Returns the pause in ms."""
    if not enabled():
        return 0.0
    started = time.perf_counter()
    gc.collect()
    gc.freeze()
    ms = (time.perf_counter() - started) * 1000
    log.info("gc: %d start-up objects frozen (%.0f ms)", gc.get_freeze_count(), ms)
    return ms


__all__ = ["enabled", "settle", "tune"]
