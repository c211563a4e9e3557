"""Ingest counters and their periodic INFO line (per-message lines are DEBUG).

Every `PALLAS_COUNTERS_INTERVAL_S` seconds (default 60; 0 turns the line off) the bot logs one
line when anything moved since the last one:

    counters: in 3001 (+3001), routed 3001, replies 1, stopped {'pallas_admin': 1},
    lanes admitted normal 3000 / priority 1, waiting normal 0 / priority 0, writer queued 0,
    last quiet turn at 1234.567 (monotonic)

`in` counts group messages that reached the one NoneBot entry, `routed` the ones the chat
handler finished routing (a reply turn included), `replies` the turns that sent something,
`stopped` the messages an earlier handler kept from the chat, `waiting` the lanes' depths,
`refused frames` the frames refused by kind (`pallas.onebot.refused`), when there were any.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter
from dataclasses import dataclass, field

from pydantic import BaseModel

log = logging.getLogger("pallas.inbound")


class CounterSettings(BaseModel):
    pallas_counters_interval_s: float = 60.0


@dataclass
class InboundCounters:
    messages: int = 0
    routed: int = 0
    replies: int = 0
    stopped: dict[str, int] = field(default_factory=dict)
    refused: Counter[str] = field(default_factory=Counter)  # frames refused, by kind
    # when the last turn that sent nothing finished routing: time.monotonic(), the same clock
    # across processes on Linux (benchmarks.ingest reads it)
    last_quiet_at: float = 0.0

    def note_routed(self, replied: bool) -> None:
        self.routed += 1
        self.replies += int(replied)
        if not replied:
            self.last_quiet_at = time.monotonic()

    def line(self, previous_messages: int, lanes: object, writer_queued: int) -> str:
        admitted = getattr(lanes, "admitted", {"normal": 0, "priority": 0})
        waiting = getattr(lanes, "waiting", {"normal": 0, "priority": 0})
        return (
            f"counters: in {self.messages} (+{self.messages - previous_messages}), "
            f"routed {self.routed}, replies {self.replies}, stopped {self.stopped}, "
            f"lanes admitted normal {admitted['normal']} / priority {admitted['priority']}, "
            f"waiting normal {waiting['normal']} / priority {waiting['priority']}, "
            f"writer queued {writer_queued}, "
            f"last quiet turn at {self.last_quiet_at:.3f} (monotonic)"
            + (f", refused frames {dict(self.refused.most_common(6))}" if self.refused else "")
        )

    def snapshot(self) -> tuple[int, int, int, int]:
        stopped, refused = sum(self.stopped.values()), sum(self.refused.values())
        return self.messages, self.routed, self.replies, stopped + refused


async def log_counters_every(
    interval: float, lanes: object, writer_queued: object, counters: InboundCounters
) -> None:
    """Forever: one INFO line per `interval` seconds when a counter moved."""
    last: tuple[int, ...] | None = None
    previous_messages = counters.messages
    while True:
        await asyncio.sleep(interval)
        now = counters.snapshot()
        if now == last:
            continue
        queued = getattr(writer_queued, "queued", 0)
        log.info("%s", counters.line(previous_messages, lanes, int(queued)))
        last, previous_messages = now, counters.messages


class CounterTask:
    """The periodic line's task: started when the app is up, cancelled at shut-down."""

    def __init__(self, counters: InboundCounters) -> None:
        self.counters = counters
        self._task: asyncio.Task[None] | None = None

    def start(self, interval: float, lanes: object, writer: object) -> None:
        if interval <= 0 or self._task is not None:
            return
        self._task = asyncio.create_task(log_counters_every(interval, lanes, writer, self.counters))

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


__all__ = ["CounterSettings", "CounterTask", "InboundCounters", "log_counters_every"]
