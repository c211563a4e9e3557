"""Two small async helpers of the memory service: one load per key at a time, and background
work that logs its failure instead of losing it."""

from __future__ import annotations

import asyncio
import logging
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


async def logged(coro: Awaitable[Any], log: logging.Logger) -> None:
    """Await `coro`; a failure is logged with its traceback (a background task's last word)."""
    try:
        await coro
    except Exception:
        log.exception("memory background task failed")
