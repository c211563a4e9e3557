"""Write-behind for rows nobody waits on: queued on the event loop, stored in batches.

A reply turn's injection snapshot, its session turns and the LLM usage ledger row are written
after the group already has the answer; awaiting their commits on the reply path only delays
the next turn. `WriteBehind.add` queues an item and returns at once; a background task waits
`linger` seconds (a burst of turns shares one transaction) and hands the batch to `write`.

Readers of the same repository call `flush()` first, so they see everything queued (the
console, the analyzer, the summary hook's reads); a reader of one group's or member's rows
calls `flush_matching(...)` instead, which writes only when an item it would read is queued
(a group's first @ in a burst then does not wait for other groups' turns to commit); a reader
that only counts can hold `settled()` and add the queued items to the stored ones, leaving the
batch alone. `flush()` is also called on a clean stop: nothing queued is lost then. A failing
batch is logged and kept; it is retried by the next flush or add (a database that is down loses
nothing it comes back from before the stop).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Generic, TypeVar

log = logging.getLogger("pallas.db")

T = TypeVar("T")


class WriteBehind(Generic[T]):
    def __init__(
        self,
        write: Callable[[list[T]], Awaitable[None]],
        *,
        name: str,
        linger: float = 0.05,
        batch_size: int = 200,
    ) -> None:
        self._write = write
        self._name = name
        self._linger = linger
        self._batch_size = batch_size
        self._pending: list[T] = []
        self._task: asyncio.Task[None] | None = None
        self._lock: asyncio.Lock | None = None
        self._lock_loop: asyncio.AbstractEventLoop | None = None

    @property
    def queued(self) -> int:
        return len(self._pending)

    @property
    def pending(self) -> tuple[T, ...]:
        """Queued items, including a batch being written right now."""
        return tuple(self._pending)

    def add(self, item: T) -> None:
        self._pending.append(item)
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(
                self._later(), name=f"write-behind:{self._name}"
            )

    async def flush(self) -> None:
        """Store everything queued so far (logged, kept for a retry, if the database fails)."""
        if not self._pending:
            return
        async with self._guard():
            while self._pending:
                batch = self._pending[: self._batch_size]
                try:
                    await self._write(batch)
                except Exception:
                    log.exception("write-behind %s: storing %d rows failed", self._name, len(batch))
                    return
                del self._pending[: len(batch)]

    async def flush_matching(self, wanted: Callable[[T], bool]) -> None:
        """`flush()` if any queued item is `wanted` (a batch being written counts: its items
        stay queued until stored); otherwise return at once — every wanted item there is has
        been stored."""
        if any(wanted(item) for item in self._pending):
            await self.flush()

    @contextlib.asynccontextmanager
    async def settled(self) -> AsyncIterator[tuple[T, ...]]:
        """While held, no batch is being written: the queued items it yields are exactly the
        ones not stored yet, and the rest are in the database (a reader can count both
        without forcing a write). Items added meanwhile stay queued for the next batch."""
        async with self._guard():
            yield tuple(self._pending)

    async def _later(self) -> None:
        await asyncio.sleep(self._linger)
        await self.flush()

    def _guard(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        if self._lock is None or self._lock_loop is not loop:  # one lock per event loop
            self._lock, self._lock_loop = asyncio.Lock(), loop
        return self._lock
