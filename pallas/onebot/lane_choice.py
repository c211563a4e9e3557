"""Which lane an incoming event takes at the edge: addressed messages first.

Under a burst of thousands of unaddressed group messages, events wait FIFO for the adapter's
admission slots (`pallas.onebot.adapter`). A message addressed to the bot — an @, a reply, a
line that names the bot by one of its aliases — must not wait behind them: `lane_for` sends it
to the priority lane, which has its own slots. The verdict is cheap and deliberately generous
(a reply to anyone counts: who wrote the quoted message is only known after a `get_msg` round
trip), because a false "priority" only lets one message skip the queue, while a false "normal"
makes an @ wait for the burst. Routing still makes the real decision later.

`lane_for` is pure (table-tested); `EdgeLanes` feeds it the group's aliases from the app.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from nonebot.adapters.onebot.v11 import Event, GroupMessageEvent

from pallas.core.turn import TurnInput
from pallas.onebot.events import turn_from_event
from pallas.routing.freshness import looks_addressed

log = logging.getLogger("pallas.onebot")


@dataclass(frozen=True, slots=True)
class LaneVerdict:
    """`priority`: the event skips the queue of unaddressed traffic. `certain`: it is addressed
    for sure when its frame is read (an @bot, an alias, a to-me verdict) and holds the loop from
    then; a reply to someone is only a candidate — whether it quotes the bot is known after
    NoneBot's `get_msg` — so it holds the loop only once that is known (`PriorityHold.engage`)."""

    priority: bool
    reason: str
    certain: bool = True


NORMAL = LaneVerdict(False, "unaddressed")


def lane_for(turn: TurnInput, aliases: Iterable[str]) -> LaneVerdict:
    """Priority for an @bot, a reply, a to-me verdict, or text naming one of `aliases`."""
    if looks_addressed(turn):
        if turn.mentions_bot:
            return LaneVerdict(True, "at")
        return LaneVerdict(True, "quotes_bot" if turn.quotes_bot else "to_me")
    if turn.reply_to is not None:
        return LaneVerdict(True, "reply", certain=False)
    text = turn.text
    if any(alias and alias in text for alias in aliases):
        return LaneVerdict(True, "alias")
    return NORMAL


AliasSource = Callable[[int], Iterable[str]]


class EdgeLanes:
    """The adapter's classifier: group messages through `lane_for`; any other event is normal
    (notices and meta events are cheap and never wait for a reply)."""

    def __init__(self, aliases: Callable[[], AliasSource | None]) -> None:
        self._aliases = aliases

    def __call__(self, event: Event) -> LaneVerdict:
        if not isinstance(event, GroupMessageEvent):
            return NORMAL
        try:
            turn = turn_from_event(event)
        except ValueError:
            return NORMAL
        source = self._aliases()
        try:
            return lane_for(turn, source(turn.group_id) if source is not None else ())
        except Exception:  # a broken group config must not stop the event
            log.exception("lane classification failed for message %s", event.message_id)
            return NORMAL

    def aliases_for(self, group_id: int) -> Iterable[str]:
        """The group's aliases (none before start-up, or when its config is broken): the
        read-ahead's raw look at a frame (`pallas.onebot.read_ahead.FrameScan`) uses them too."""
        source = self._aliases()
        if source is None:
            return ()
        try:
            return source(group_id)
        except Exception:
            return ()


__all__ = ["NORMAL", "EdgeLanes", "LaneVerdict", "lane_for"]
