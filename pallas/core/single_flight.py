"""One load per key at a time: concurrent callers that miss the same cold entry share one load.

The load runs as a task of its own, so a caller that is cancelled (a turn that gave up) does
not cancel it for the others waiting; each caller awaits it through `asyncio.shield`. When the
load ends — with a value or an exception — the key is forgotten: every caller waiting gets
that value or that exception, and the next caller loads again (a failed load is not cached;
keeping the value is the caller's cache's job). Background work is
`pallas.core.background.BackgroundJobs`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class SingleFlight(Generic[K, V]):
    """The loads in flight, by key (one instance per kind of load)."""

    __slots__ = ("_loads",)

    def __init__(self) -> None:
        self._loads: dict[K, asyncio.Future[V]] = {}

    def __contains__(self, key: object) -> bool:
        """Whether a load of `key` is in flight."""
        return key in self._loads

    def __len__(self) -> int:
        return len(self._loads)

    async def run(self, key: K, load: Callable[[], Awaitable[V]]) -> V:
        """The result of the load of `key` in flight, or of `load()` started now."""
        pending = self._loads.get(key)
        if pending is None:
            pending = asyncio.ensure_future(load())
            self._loads[key] = pending
            pending.add_done_callback(lambda done: self._forget(key, done))
        return await asyncio.shield(pending)

    def _forget(self, key: K, done: asyncio.Future[V]) -> None:
        if self._loads.get(key) is done:
            del self._loads[key]
