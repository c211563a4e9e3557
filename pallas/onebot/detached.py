"""Work that runs detached from NoneBot's dispatch: a chat turn (model call, paced bubbles).

NoneBot runs its priority levels one after another: a matcher that awaits a whole chat turn
keeps every plugin of a lower priority waiting for it. The chat handler therefore starts the
turn as a task and returns; the task is kept here (referenced, so it is not collected while it
runs), a failure is logged once, and the tasks still running at shut-down are given a moment
to finish and then cancelled (`drain`).

Unaddressed turns are bounded: at most `UNADDRESSED_AT_ONCE` of them route at a time (the
others wait their turn in order), as many as the normal admission lane admits handlers
(`lanes.ADMISSION_SLOTS`). Without the bound a burst of 3,000 lines became 3,000 routing
coroutines interleaved on the loop, and ingest fell from 0.65-0.69x to 0.49x of the bare
NoneBot floor (`benchmarks.ingest`). An addressed turn never waits behind them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

from pallas.onebot.lanes import ADMISSION_SLOTS

log = logging.getLogger("pallas.chat")

DRAIN_S = 5.0
UNADDRESSED_AT_ONCE = ADMISSION_SLOTS


class DetachedTurns:
    def __init__(self, *, unaddressed_at_once: int = UNADDRESSED_AT_ONCE) -> None:
        self._tasks: dict[asyncio.Task[Any], str] = {}
        self._unaddressed = asyncio.Semaphore(unaddressed_at_once)

    def __len__(self) -> int:
        return len(self._tasks)

    def spawn(
        self, work: Coroutine[Any, Any, Any], what: str, *, bounded: bool = False
    ) -> asyncio.Task[Any]:
        """Run `work` detached; `bounded` (an unaddressed turn): once one of the
        `unaddressed_at_once` places is free."""
        task = asyncio.create_task(self._in_turn(work) if bounded else work)
        self._tasks[task] = what
        task.add_done_callback(self._finished)
        return task

    async def _in_turn(self, work: Coroutine[Any, Any, Any]) -> Any:
        try:
            async with self._unaddressed:
                return await work
        finally:
            work.close()  # never started when cancelled while waiting: no "never awaited"

    def _finished(self, task: asyncio.Task[Any]) -> None:
        what = self._tasks.pop(task, "detached work")
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            log.error("%s failed", what, exc_info=exc)

    async def drain(self, within_s: float = DRAIN_S) -> None:
        """Let the running turns finish (at most `within_s`), then cancel what is left."""
        if not self._tasks:
            return
        tasks = list(self._tasks)
        _, pending = await asyncio.wait(tasks, timeout=within_s)
        for task in pending:
            task.cancel()
        if pending:
            log.warning("%d chat turn(s) still running at shut-down were cancelled", len(pending))
            await asyncio.wait(pending, timeout=1.0)

    async def idle(self) -> None:
        """Until no detached work runs (tests)."""
        while self._tasks:
            await asyncio.wait(list(self._tasks))


__all__ = ["DetachedTurns"]
