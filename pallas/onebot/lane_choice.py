"""Which lane an incoming event takes at the edge: addressed messages first.

Under a burst of thousands of unaddressed group messages, events wait FIFO for the adapter's
admission slots (`pallas.onebot.adapter`). A message addressed to the bot — an @, a reply, a
line that names the bot by one of its aliases — must not wait behind them: `lane_for` sends it
to the priority lane, which has its own slots. The verdict is cheap and deliberately generous
(a reply to anyone counts: who wrote the quoted message is only known after a `get_msg` round
trip), because a false "priority" only lets one message skip the queue, while a false "normal"
makes an @ wait for the burst. Routing still makes the real decision later.

`lane_for` is pure (table-tested); `LaneChoice` feeds it the group's aliases from the app.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from pallas.core.turn import TurnInput
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


class LaneChoice:
    """The edge's lane choice: a converted group message through `lane_for` with its group's
    aliases (a broken group config makes it normal, it never stops the event)."""

    def __init__(self, aliases: AliasSource) -> None:
        self._aliases = aliases

    def for_turn(self, turn: TurnInput) -> LaneVerdict:
        try:
            return lane_for(turn, self._aliases(turn.group_id))
        except Exception:  # a broken group config must not stop the event
            log.exception("lane choice failed for message %s", turn.message_id)
            return NORMAL

    def aliases_for(self, group_id: int) -> Iterable[str]:
        """The group's aliases (none when its config is broken): the read-ahead's raw look at
        a frame (`pallas.onebot.read_ahead.FrameScan`) uses them too."""
        try:
            return self._aliases(group_id)
        except Exception:
            return ()


__all__ = ["NORMAL", "AliasSource", "LaneChoice", "LaneVerdict", "lane_for"]
