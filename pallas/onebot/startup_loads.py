"""Start-up loads (the `openai` SDK, jieba's dictionary, the BPE ranks, the CA bundle) off the
critical path.

NoneBot awaits every start-up hook before uvicorn accepts a connection, so a load awaited there
delays "listening" by its length (~2 s together, the `openai` SDK import included). The edge
builds one `StartupLoads` with its loaders (`pallas.onebot.edge.build_edge`); `start` runs them
in one worker thread as a background task and nothing waits for them except a handler that
needs them: `await loads.ready()` (a finished load costs one check) — so the first reply never
loads a dictionary on the event loop.

After the loads, and then every `trim_interval` seconds, free heap pages go back to the kernel
(`malloc_trim`, glibc only; see pallas/core/malloc_tuning.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Sequence

from pallas.core import malloc_tuning

log = logging.getLogger("pallas.onebot")

Loader = Callable[[], object]  # blocking, thread-safe, idempotent
TRIM_INTERVAL = 60.0


class StartupLoads:
    def __init__(self, loaders: Sequence[Loader], *, trim_interval: float = TRIM_INTERVAL) -> None:
        self.loaders = tuple(dict.fromkeys(loaders))  # each once, in order
        self._trim_interval = trim_interval
        self._task: asyncio.Task[None] | None = None
        self._trimmer: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Returns at once: the loaders run in a thread, then the periodic trim begins."""
        if self._task is None:
            self._task = asyncio.create_task(asyncio.to_thread(self._run_all))
        if self._trimmer is None:
            self._trimmer = asyncio.create_task(self._trim_periodically())

    async def stop(self) -> None:
        trimmer, self._trimmer = self._trimmer, None
        if trimmer is not None:
            trimmer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await trimmer

    @property
    def started(self) -> bool:
        return self._task is not None

    async def ready(self) -> None:
        """Wait (without blocking the loop) until the loads finished; at once after that."""
        task = self._task
        if task is None or task.done():
            return
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            if task.cancelled():
                return
            raise

    def _run_all(self) -> None:
        begun = time.perf_counter()
        for loader in self.loaders:
            started = time.perf_counter()
            try:
                loader()
            except Exception:  # the real call will raise again where it is needed
                log.exception("warm-up %s failed", getattr(loader, "__qualname__", loader))
                continue
            log.debug("warm-up %s: %.0f ms", loader, (time.perf_counter() - started) * 1000)
        malloc_tuning.trim()  # the loads' temporary buffers (file text, dict builds)
        log.info(
            "warm-ups done in %.2f s (openai SDK, tokenizers, CA bundle)",
            time.perf_counter() - begun,
        )

    async def _trim_periodically(self) -> None:
        while True:
            await asyncio.sleep(self._trim_interval)
            await asyncio.to_thread(malloc_tuning.trim)


__all__ = ["Loader", "StartupLoads"]
