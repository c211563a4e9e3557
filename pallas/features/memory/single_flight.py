"""One load per key at a time (the memory service's loads; background work is
`pallas.core.background.BackgroundJobs`)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from typing import Any, TypeVar

T = TypeVar("T")


async def single_flight(
    loading: dict[Hashable, asyncio.Future[Any]], key: Hashable, load: Callable[[], Awaitable[T]]
) -> T:
    """One load per key at a time: concurrent callers (the turn's sources) share it."""
    pending = loading.get(key)
    if pending is None:
        pending = asyncio.ensure_future(load())
        loading[key] = pending
        pending.add_done_callback(lambda done: _forget(loading, key, done))
    return await asyncio.shield(pending)


def _forget(
    loading: dict[Hashable, asyncio.Future[Any]], key: Hashable, done: asyncio.Future[Any]
) -> None:
    if loading.get(key) is done:
        del loading[key]
