"""Session-variable commits in flight, per group, so the next turn reads the new values.

A reply's `<svar>` ops are committed only after its last bubble went out. A member who answers
that bubble at once (an @ read a few milliseconds later) must see the changed values, not the
ones from before the commit: the reply engages a hold just before sending its final bubble and
releases it after the commit (or when delivery failed); `settled` waits for the holds of the
group, bounded, before a turn reads its variables. In-process only: with several bot processes
sharing Redis the window is as before (a few ms).
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field

log = logging.getLogger("pallas.svars")

GroupKey = tuple[int, int]  # (bot_id, group_id)
SETTLE_TIMEOUT_S = 2.0  # a send round trip plus one commit; past this the turn reads as is


@dataclass
class _Holds:
    count: int = 0
    released: asyncio.Event = field(default_factory=asyncio.Event)


class PendingCommits:
    def __init__(self, timeout_s: float = SETTLE_TIMEOUT_S) -> None:
        self._timeout_s = timeout_s
        self._groups: dict[GroupKey, _Holds] = {}

    def hold(self, bot_id: int, group_id: int) -> CommitHold:
        """A hold for one reply's commit; nothing waits on it until `engage`."""
        return CommitHold(self, (bot_id, group_id))

    def pending(self, bot_id: int, group_id: int) -> int:
        holds = self._groups.get((bot_id, group_id))
        return holds.count if holds is not None else 0

    async def settled(self, bot_id: int, group_id: int) -> None:
        """Return once no commit of the group is in flight (or the timeout passed)."""
        holds = self._groups.get((bot_id, group_id))
        if holds is None:
            return
        started = time.perf_counter()
        # asyncio.wait, not wait_for / timeout: those bind to the current task, and the reply
        # step may step this coroutine eagerly inside its caller's task (core/eager.py)
        waiter = asyncio.ensure_future(holds.released.wait())
        try:
            done, _ = await asyncio.wait((waiter,), timeout=self._timeout_s)
        finally:
            waiter.cancel()  # no-op once set; a cancelled or timed-out reader leaves no task
        if not done:
            log.warning(
                "group %s: a session-variable commit is still in flight after %.1f s; "
                "this turn reads the values as they are",
                group_id,
                self._timeout_s,
            )
            return
        log.debug(
            "group %s: waited %.1f ms for a session-variable commit",
            group_id,
            (time.perf_counter() - started) * 1000,
        )

    def _engage(self, key: GroupKey) -> None:
        holds = self._groups.get(key)
        if holds is None:
            holds = self._groups[key] = _Holds()
        holds.count += 1

    def _release(self, key: GroupKey) -> None:
        holds = self._groups.get(key)
        if holds is None:
            return
        holds.count -= 1
        if holds.count <= 0:
            del self._groups[key]
            holds.released.set()


class CommitHold:
    """Engaged at most once, released at most once (release without engage is a no-op)."""

    __slots__ = ("_engaged", "_key", "_owner")

    def __init__(self, owner: PendingCommits, key: GroupKey) -> None:
        self._owner = owner
        self._key = key
        self._engaged = False

    def engage(self) -> None:
        if not self._engaged:
            self._engaged = True
            self._owner._engage(self._key)

    def release(self) -> None:
        if self._engaged:
            self._engaged = False
            self._owner._release(self._key)


class NoHold:
    """For a reply without ops to commit."""

    def engage(self) -> None:
        return None

    def release(self) -> None:
        return None


__all__ = ["CommitHold", "NoHold", "PendingCommits"]
