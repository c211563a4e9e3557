"""`TurnContext`: one group message on its way through the spine.

It carries what the steps share about the message itself, so nothing of it travels in a global,
a context variable or a patched method:

- the `TurnInput` (converted once at the edge) and the attempt (a message retried after the
  group cooldown is routed again);
- what sends its answers (`Sender`; they go to `Target.of(turn)`);
- the message's hold on the event loop (`LoopHold`): an @ read off a busy socket keeps
  unaddressed handlers waiting until its model request is out. The turn releases it the moment
  it no longer needs the loop: when the request goes out (`request_out`), and whenever it waits
  (`wait`: a merge wait, the freshness settle, a retry after the cooldown, bubble pacing) —
  a sleeping turn needs no loop;
- how the turn waits (`Pause`, shared: tests swap its sleep for one that advances a fake clock);
- what the bot's other plugins did with the line (`OtherPlugins`): a line another NoneBot
  plugin answered or took is not answered again.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from typing import Protocol

from pallas.core.clock import Sleep
from pallas.core.sending import Sender
from pallas.core.turn import TurnInput


@dataclass(slots=True)
class Pause:
    """How turns wait, shared by the steps `build_app` builds; tests and benchmarks swap
    `sleep` for one that advances a fake clock or returns at once."""

    sleep: Sleep = asyncio.sleep

    async def __call__(self, seconds: float) -> None:
        await self.sleep(seconds)


class LoopHold(Protocol):
    """An addressed message's claim on the event loop (`pallas.onebot.lanes.PriorityHold`)."""

    def release(self) -> None: ...


class _NoHold:
    def release(self) -> None:
        return None


NO_HOLD: LoopHold = _NoHold()  # an unaddressed message, a replay, a test


class OtherPlugins(Protocol):
    """Whether another plugin of the bot answered or took the line (`pallas.onebot.arrival`):
    the plugin's name, or None."""

    def known(self) -> str | None:
        """As far as is known now, without waiting."""
        ...

    async def settled(self) -> str | None:
        """Once the bot's dispatch of the line is over (waiting at most a bounded time)."""
        ...


class _NoOthers:
    def known(self) -> str | None:
        return None

    async def settled(self) -> str | None:
        return None


NO_OTHERS: OtherPlugins = _NoOthers()  # no other plugins (replay, tests without NoneBot)


@dataclass(frozen=True, slots=True)
class TurnContext:
    turn: TurnInput
    sender: Sender
    pause: Pause
    hold: LoopHold = NO_HOLD
    attempt: int = 0
    others: OtherPlugins = NO_OTHERS

    async def wait(self, seconds: float) -> None:
        """The turn's one way to wait; the loop is free for others meanwhile."""
        self.hold.release()
        await self.pause(seconds)

    def request_out(self) -> None:
        """The model request goes out: unaddressed work may start again."""
        self.hold.release()

    def retried(self) -> TurnContext:
        """The same message, routed again after the group cooldown."""
        return replace(self, attempt=self.attempt + 1)


__all__ = ["NO_HOLD", "NO_OTHERS", "LoopHold", "OtherPlugins", "Pause", "Sleep", "TurnContext"]
