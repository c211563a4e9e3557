"""`Arrival`: one group or private message on its way through the inbound handlers.

It carries what the edge already knows about the message — the turn converted when its frame
was read, an addressed message's hold on the event loop — and what a handler needs from the
edge (the start-up loads, the counters), so a handler reads nothing from a global.
"""

from __future__ import annotations

from typing import Any

from nonebot.adapters.onebot.v11 import Bot, Message, MessageEvent
from nonebot.consts import CMD_ARG_KEY, CMD_KEY, PREFIX_KEY
from nonebot.typing import T_State

from pallas.app_model import PallasApp
from pallas.core.turn import TurnInput
from pallas.onebot.counters import InboundCounters
from pallas.onebot.detached import DetachedTurns
from pallas.onebot.events import ConvertedTurn, turn_from_event
from pallas.onebot.lanes import PriorityHold
from pallas.onebot.neighbours import LineWatch
from pallas.onebot.startup_loads import StartupLoads


class OtherPlugins:
    """What the other NoneBot plugins did with this line (`pallas.turn.context.OtherPlugins`):
    known now, or once NoneBot's dispatch of it is over (the addressed line's hold lets frames
    be read while it waits)."""

    __slots__ = ("_hold", "_watch")

    def __init__(self, watch: LineWatch, hold: PriorityHold | None) -> None:
        self._watch, self._hold = watch, hold

    def known(self) -> str | None:
        return self._watch.known()

    async def settled(self) -> str | None:
        return await self._watch.settled(self._hold)


class Arrival:
    __slots__ = (
        "_converted",
        "app",
        "bot",
        "counters",
        "detached",
        "event",
        "hold",
        "loads",
        "state",
        "watch",
    )

    def __init__(
        self,
        bot: Bot,
        event: MessageEvent,
        app: PallasApp,
        *,
        loads: StartupLoads,
        counters: InboundCounters,
        state: T_State | None = None,
        read: ConvertedTurn | None = None,
        hold: PriorityHold | None = None,
        watch: LineWatch | None = None,
        detached: DetachedTurns | None = None,
    ) -> None:
        self.bot = bot
        self.event = event
        self.app = app
        self.loads = loads  # `await arrival.loads.ready()` before using a start-up load
        self.counters = counters
        self.state: T_State = state if state is not None else {}
        self.hold = hold  # an addressed message's claim on the loop (released by its turn)
        self._converted = read
        self.watch = watch if watch is not None else LineWatch(event, 0.0)  # others' verdict
        # where a handler starts work that must not hold up NoneBot's dispatch (the chat turn)
        self.detached = detached if detached is not None else DetachedTurns()

    @property
    def others(self) -> OtherPlugins:
        return OtherPlugins(self.watch, self.hold)

    def turn(self) -> TurnInput:
        """The message's `TurnInput`: the conversion made at read while it still fits (NoneBot
        may have set `to_me` or looked up the quoted message since); raises ValueError for an
        unusable event."""
        self._converted = turn_from_event(self.event, self._converted)
        return self._converted.turn

    @property
    def group_id(self) -> int:
        """The message's group; 0 for a private message."""
        return int(getattr(self.event, "group_id", 0) or 0)

    def command(self) -> tuple[tuple[str, ...], Message] | None:
        """(command, argument) when NoneBot's command trie matched this message."""
        prefix: dict[str, Any] = self.state.get(PREFIX_KEY) or {}
        cmd = prefix.get(CMD_KEY)
        if not cmd:
            return None
        arg = prefix.get(CMD_ARG_KEY)
        return tuple(cmd), arg if isinstance(arg, Message) else Message()


__all__ = ["Arrival", "OtherPlugins"]
