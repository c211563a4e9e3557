"""Background jobs a service starts and must not lose at shutdown.

`BackgroundJobs.spawn(coro, what, kind)` runs `coro` as a named task whose failure is logged (a
background task's last word), and keeps it until it ends. `drain(within_s)` waits for every job —
also the ones the running jobs start meanwhile — for at most `within_s` seconds, then cancels
what is left and says so in one WARNING naming each dropped job and counting them by kind
("expansion 2, backfill 1"), so shutdown is bounded and nothing is lost silently. It returns
the names of the dropped jobs.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Coroutine
from typing import Any


class BackgroundJobs:
    def __init__(self, owner: str, log: logging.Logger) -> None:
        self._owner = owner
        self._log = log
        self._tasks: set[asyncio.Task[None]] = set()
        self._kinds: dict[asyncio.Task[None], str] = {}

    def __len__(self) -> int:
        return len(self._tasks)

    def spawn(
        self, coro: Coroutine[Any, Any, Any], what: str, kind: str | None = None
    ) -> asyncio.Task[None]:
        """Run `coro` as the job `what` ("expansion of item 7") of `kind` ("expansion"; the
        name when not given)."""
        task = asyncio.create_task(self._logged(coro, what), name=what)
        self._tasks.add(task)
        self._kinds[task] = kind or what
        task.add_done_callback(self._forget)
        return task

    def _forget(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        self._kinds.pop(task, None)

    async def _logged(self, coro: Coroutine[Any, Any, Any], what: str) -> None:
        try:
            await coro
        except Exception:
            self._log.exception("%s background job %s failed", self._owner, what)

    async def drain(self, within_s: float | None = None) -> list[str]:
        """Wait for the jobs (and the jobs they start) for at most `within_s` seconds; cancel
        and name what is left."""
        deadline = None if within_s is None else time.monotonic() + within_s
        while self._tasks:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                break
            await asyncio.wait(list(self._tasks), timeout=left)
        dropped = sorted(task.get_name() for task in self._tasks)
        kinds = Counter(self._kinds.get(task, task.get_name()) for task in self._tasks)
        for task in list(self._tasks):
            task.cancel()
        if dropped:
            await asyncio.wait(list(self._tasks), timeout=1.0)
            by_kind = ", ".join(f"{kind} {n}" for kind, n in sorted(kinds.items()))
            self._log.warning(
                "%s: %d background job(s) not finished within %.1f s at shutdown, dropped: %s "
                "(by kind: %s)",
                self._owner, len(dropped), within_s or 0.0, ", ".join(dropped[:20]), by_kind,
            )  # fmt: skip
        return dropped


__all__ = ["BackgroundJobs"]
