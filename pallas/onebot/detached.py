"""Work that runs detached from NoneBot's dispatch: a chat turn (model call, paced bubbles).

NoneBot runs its priority levels one after another: a matcher that awaits a whole chat turn
keeps every plugin of a lower priority waiting for it. The chat handler therefore starts the
turn as a task and returns; the task is kept here (referenced, so it is not collected while it
runs), a failure is logged once, and the tasks still running at shut-down are given a moment
to finish and then cancelled (`drain`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

log = logging.getLogger("pallas.chat")

DRAIN_S = 5.0


class DetachedTurns:
    def __init__(self) -> None:
        self._tasks: dict[asyncio.Task[Any], str] = {}

    def __len__(self) -> int:
        return len(self._tasks)

    def spawn(self, work: Coroutine[Any, Any, Any], what: str) -> asyncio.Task[Any]:
        task = asyncio.create_task(work)
        self._tasks[task] = what
        task.add_done_callback(self._finished)
        return task

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
