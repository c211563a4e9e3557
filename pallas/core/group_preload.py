"""Warm a group's reply-path entries in the background when the bot sees the group.

The first @ in a group pays for the group's entries: its newest lines and session turns, who
has a session or an archived topic there, its learning data, its shared memory kinds and
today's usage counters (seeded from the ledger, cost guard) — ~10 reads on the reply's critical
path. `GroupPreload.seen` hears every message handed to the writer (the runtime's
`IngestEvents`; O(1) per message): the first line of a group since start, or the first one
`refresh_s` after the group was last warmed, queues the group, and one background task loads
its entries through the same caches the reply path reads (same keys, same results: a turn after
the warm-up reads what it would have loaded itself). One group at a time, a yield between
loads, only groups whose chat is enabled, and at most `max_per_refresh` warm-ups started per
`refresh_s`: the DB work stays bounded (~7 reads a group) and the warmed entries fit the caches
they fill (memory candidates: 512 entries, five a group; learning: 256 groups) instead of
pushing out the entries of groups the bot talks in. Past that budget a group loads on its own
first @, as before. A failing load is logged and skipped. Before each load the task awaits
`yield_to` (by default one loop round, so ingest goes first; the OneBot edge passes its lanes'
`after_holds`, so a load waits while an addressed turn prepares its model request: a warm-up's
reads would only slow that turn's own).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from typing import Generic, Protocol, TypeVar

from cachetools import FIFOCache

from pallas.core.clock import Clock
from pallas.core.db.ingest_events import IngestEvents
from pallas.core.records import StoredMessage

log = logging.getLogger("pallas.chat")


class PreloadConfig(Protocol):
    """What the preload reads of a group's config (the core cannot see `GroupConfig`)."""

    @property
    def enabled(self) -> bool: ...


C = TypeVar("C", bound=PreloadConfig)
# (bot_id, group_id, group config, now) → one group-level load
GroupLoad = Callable[[int, int, C, float], Awaitable[None]]
YieldTo = Callable[[], Awaitable[None]]
LOGGED_RUN_GROUPS = 10  # a warm-up run of this many groups or more is logged at INFO


class GroupPreload(Generic[C]):
    def __init__(
        self,
        loads: Sequence[GroupLoad[C]],
        *,
        clock: Clock,
        group_config: Callable[[int], C],
        refresh_s: float = 240.0,
        max_per_refresh: int = 96,
        max_tracked: int = 4096,
        yield_to: YieldTo | None = None,
        events: IngestEvents | None = None,
    ) -> None:
        """`events`: the runtime's ingest events; the preload hears every submit from now on
        (without them, the caller calls `seen`)."""
        self._loads = tuple(loads)
        self._clock = clock
        self._group_config = group_config
        self.refresh_s = refresh_s
        self.max_per_refresh = max_per_refresh
        # → when queued; FIFO by that time (a read does not refresh, queueing again moves it)
        self._warmed: FIFOCache[tuple[int, int], float] = FIFOCache(max_tracked)
        self._started: deque[float] = deque()  # when the warm-ups of the last refresh_s began
        self._queue: deque[tuple[int, int]] = deque()
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        self._yield_to: YieldTo = yield_to or _one_round
        if events is not None:
            events.subscribe(submitted=self.seen)

    def seen(self, message: StoredMessage) -> None:
        """A line handed to the message writer: queue its group if it is not warm."""
        if message.group_id == 0 or self._closed:
            return
        key = (message.bot_id, message.group_id)
        now = self._clock.now()
        last = self._warmed.get(key)
        if last is not None and 0 <= now - last < self.refresh_s:
            return
        while self._started and not 0 <= now - self._started[0] < self.refresh_s:
            self._started.popleft()
        if len(self._started) >= self.max_per_refresh:
            return  # budget spent: this group loads on its own first @
        self._started.append(now)
        self._warmed[key] = now
        self._queue.append(key)
        if self._task is None or self._task.done():
            try:
                self._task = asyncio.get_running_loop().create_task(self._run())
            except RuntimeError:  # no running loop (a synchronous caller): nothing to warm
                self._queue.clear()

    async def _run(self) -> None:
        started, warmed = time.perf_counter(), 0
        while self._queue:
            bot_id, group_id = self._queue.popleft()
            await self.warm(bot_id, group_id)
            warmed += 1
        # A run of many groups (start-up, a restart into a busy evening) is worth a line: until
        # it ends, a group's first @ may still load its own entries.
        log.log(
            logging.INFO if warmed >= LOGGED_RUN_GROUPS else logging.DEBUG,
            "group warm-up: %d groups warmed in %.2f s",
            warmed,
            time.perf_counter() - started,
        )

    async def warm(self, bot_id: int, group_id: int) -> None:
        """Load one group's entries (one load at a time, yielding between them)."""
        config = self._group_config(group_id)
        if not config.enabled:  # record only, never speaks
            return
        for load in self._loads:
            await self._yield_to()  # ingest (and an addressed turn) first
            try:
                await load(bot_id, group_id, config, self._clock.now())
            except Exception:
                log.exception("group %s: warm-up load failed", group_id)

    async def drain(self) -> None:
        """Wait for the queued warm-ups (tests)."""
        while self._task is not None and not self._task.done():
            await asyncio.shield(self._task)

    async def close(self) -> None:
        """Drop the queue and wait for the group being warmed (a clean stop)."""
        self._queue.clear()
        self._closed = True
        await self.drain()


async def _one_round() -> None:
    await asyncio.sleep(0)
