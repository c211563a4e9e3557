"""Start-up warm-ups (jieba's dictionary, the BPE ranks, the CA bundle) off the critical path.

NoneBot awaits every `on_startup` hook before uvicorn accepts a connection, so a warm-up awaited
there delays "listening" by its length (~2 s together, the `openai` SDK import included).
Plugins `add` their loader here; the loaders start in one worker thread as a background task
when the driver starts, and nothing waits for them except a handler that needs them:
`await ready()` (a finished warm-up costs one check) — so the first reply never loads a
dictionary on the event loop.

After the warm-ups, and then every `TRIM_INTERVAL` seconds, free heap pages go back to the
kernel (`malloc_trim`, glibc only; see pallas/core/malloc_tuning.py).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from nonebot import get_driver

from pallas.core import malloc_tuning
from pallas.providers.client import load_sdk

log = logging.getLogger("pallas.onebot")

# The `openai` SDK import (~0.6-1 s) is the first loader: the LLM client imports it lazily.
_loaders: list[Callable[[], object]] = [load_sdk]
_task: asyncio.Task[None] | None = None
_trimmer: asyncio.Task[None] | None = None
_registered = False
TRIM_INTERVAL = 60.0


def add(loader: Callable[[], object]) -> None:
    """Run `loader` (blocking, thread-safe, idempotent) in the background at start-up."""
    global _registered
    if loader not in _loaders:
        _loaders.append(loader)
    if not _registered:
        _registered = True
        get_driver().on_startup(_start)
        get_driver().on_shutdown(_stop)


def _run_all() -> None:
    begun = time.perf_counter()
    for loader in list(_loaders):
        started = time.perf_counter()
        try:
            loader()
        except Exception:  # the real call will raise again where it is needed
            log.exception("warm-up %s failed", getattr(loader, "__qualname__", loader))
            continue
        log.debug("warm-up %s: %.0f ms", loader, (time.perf_counter() - started) * 1000)
    malloc_tuning.trim()  # the loads' temporary buffers (file text, dict builds)
    log.info(
        "warm-ups done in %.2f s (openai SDK, tokenizers, CA bundle)", time.perf_counter() - begun
    )


async def _trim_periodically() -> None:
    while True:
        await asyncio.sleep(TRIM_INTERVAL)
        await asyncio.to_thread(malloc_tuning.trim)


async def _start() -> None:
    """The driver's start-up hook: returns at once, the loaders run in a thread."""
    global _task, _trimmer
    if _task is None or _task.get_loop().is_closed():
        _task = asyncio.create_task(asyncio.to_thread(_run_all))
    if _trimmer is None or _trimmer.get_loop().is_closed():
        _trimmer = asyncio.create_task(_trim_periodically())


async def _stop() -> None:
    if _trimmer is not None and not _trimmer.done():
        _trimmer.cancel()


def started() -> bool:
    """Whether the warm-ups were started (by the driver's start-up hook)."""
    return _task is not None and not _task.get_loop().is_closed()


async def ready() -> None:
    """Wait (without blocking the loop) until the warm-ups finished; at once after that."""
    task = _task
    if task is None or task.done():
        return
    try:
        await asyncio.shield(task)
    except asyncio.CancelledError:
        if task.cancelled():
            return
        raise


__all__ = ["add", "ready", "started"]
