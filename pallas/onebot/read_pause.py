"""How long the receive loop may keep event frames waiting while an @ prepares its model request.

While an addressed turn holds the loop (`pallas.onebot.lanes.Lanes`), an event frame the
receive loop has read waits before it is parsed, so the @'s own steps get the event loop. The
wait is bounded twice: each frame waits at most `per_frame_s`, and all waits together are paid
from a budget that refills at `share` seconds per second up to `cap_s` — a stream of @s can
slow recording down to `1 - share` of the loop, never stop it. (Frames are only delayed: every
one is still read, recorded and handled.)

`PauseBudget` is pure bookkeeping over an injected clock (table-tested).
"""

from __future__ import annotations

import time
from collections.abc import Callable

READ_PAUSE_PER_FRAME_S = 0.25
READ_PAUSE_SHARE = 0.5
READ_PAUSE_CAP_S = 1.0


class PauseBudget:
    """Seconds of read pause still allowed: starts full (`cap_s`), refills at `share` per second
    of `clock`, spent by `spend`."""

    __slots__ = ("_cap_s", "_clock", "_left", "_per_frame_s", "_share", "_since")

    def __init__(
        self,
        *,
        share: float = READ_PAUSE_SHARE,
        cap_s: float = READ_PAUSE_CAP_S,
        per_frame_s: float = READ_PAUSE_PER_FRAME_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._share = share
        self._cap_s = cap_s
        self._per_frame_s = per_frame_s
        self._clock = clock
        self._left = cap_s
        self._since = clock()

    def allowance(self) -> float:
        """How long the next frame may wait (0: read it at once)."""
        now = self._clock()
        self._left = min(self._cap_s, self._left + (now - self._since) * self._share)
        self._since = now
        return max(0.0, min(self._per_frame_s, self._left))

    def spend(self, seconds: float) -> None:
        self._left = max(0.0, self._left - max(0.0, seconds))


__all__ = ["READ_PAUSE_CAP_S", "READ_PAUSE_PER_FRAME_S", "READ_PAUSE_SHARE", "PauseBudget"]
