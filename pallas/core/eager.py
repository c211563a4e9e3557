"""`eager_gather`: `asyncio.gather` that does not yield to the event loop when it need not.

`asyncio.gather` wraps every coroutine in a task, and a task first runs on the loop's next
iteration: the caller waits at least one full round of everything else that is ready, and
again when it is woken. Under a burst of inbound messages one round is tens of milliseconds,
so a reply turn whose reads are all warm (served from memory, never suspending) paid rounds
for nothing. `eager_gather` steps each coroutine right away, in order; one that finishes
without suspending is simply done, and only the ones that do suspend continue as tasks, side
by side, as `gather` would run them (Python 3.12's eager task factory, for one call).

Semantics as `asyncio.gather(*coros)` without `return_exceptions`: results in argument
order; the first exception is raised (coroutines already running as tasks keep running).
One difference: until its first suspension a coroutine runs in the caller's task
(`asyncio.current_task()`), so code entering `asyncio.timeout` (bound to the current task)
must not be stepped eagerly — the reply step gives a planned tool a task of its own.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Generator
from typing import Any


class _Resume:
    """Drives a coroutine that already suspended once: re-yields what it yielded (a future
    or a bare yield) to the task running this, and passes back what the task sends / throws."""

    __slots__ = ("_coro", "_pending")

    def __init__(self, coro: Coroutine[Any, Any, Any], pending: Any) -> None:
        self._coro = coro
        self._pending = pending

    def __await__(self) -> Generator[Any, Any, Any]:
        value = self._pending
        while True:
            try:
                sent = yield value
            except BaseException as exc:  # cancellation or a failed future: into the coroutine
                try:
                    value = self._coro.throw(exc)
                except StopIteration as stop:
                    return stop.value
            else:
                try:
                    value = self._coro.send(sent)
                except StopIteration as stop:
                    return stop.value


async def _continue(coro: Coroutine[Any, Any, Any], pending: Any) -> Any:
    return await _Resume(coro, pending)


async def eager_gather(*coros: Coroutine[Any, Any, Any]) -> list[Any]:
    """Results of `coros` in order; the ones that never suspend cost no loop iteration."""
    results: list[Any] = [None] * len(coros)
    waiting: dict[int, asyncio.Future[Any]] = {}
    failure: BaseException | None = None
    for at, coro in enumerate(coros):
        if failure is not None:
            waiting[at] = asyncio.ensure_future(coro)  # gather would have started it too
            continue
        try:
            pending = coro.send(None)
        except StopIteration as stop:
            results[at] = stop.value
        except BaseException as exc:
            failure = exc
        else:
            waiting[at] = asyncio.ensure_future(_continue(coro, pending))
    if failure is not None:
        raise failure
    if waiting:
        done = await asyncio.gather(*waiting.values())
        for at, value in zip(waiting, done, strict=True):
            results[at] = value
    return results
