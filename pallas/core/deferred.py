"""`Deferred`: a value built once — on first use, or earlier while the event loop is idle.

A reply turn's snapshot is needed only after the LLM answers, yet building it costs local
time on the turn's critical path. `soon()` schedules the build for the loop's next round,
which comes when the turn awaits the model's answer: the work fills that wait instead of
delaying the request. `get()` returns the value, building it then if it is not built yet
(the answer came back first, or no loop round happened in between).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")

log = logging.getLogger("pallas.deferred")


class Deferred(Generic[T]):
    __slots__ = ("_build", "_value")

    def __init__(self, build: Callable[[], T]) -> None:
        self._build: Callable[[], T] | None = build
        self._value: T | None = None

    @property
    def built(self) -> bool:
        return self._build is None

    def get(self) -> T:
        build = self._build
        if build is not None:
            self._value = build()  # a failure propagates here and the next get() retries
            self._build = None
        return self._value  # type: ignore[return-value]  # built: T (None only if T allows)

    def soon(self) -> None:
        """Build on the running loop's next round (a failure is left for `get` to raise)."""
        if self._build is not None:
            asyncio.get_running_loop().call_soon(self._build_quietly)

    def _build_quietly(self) -> None:
        try:
            self.get()
        except Exception:  # raised again, with its traceback, by get()
            log.debug("deferred build failed; get() will raise it", exc_info=True)
