"""Where a message goes (`Target`) and what sends it (`Sender`), independent of NoneBot.

A target is a group or the private chat with one user; a sender sends one message to a
target. The turn answers through the `Sender` in its `TurnContext` (`Target.of(turn)`: its
group, or its user for a private turn) and sends the cost guard's notices to superusers
through the same sender (`Target.private(user_id)`). `pallas.onebot.sender.OneBotSender` is
the live one; tests and benchmarks keep what was sent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

from pallas.core.turn import TurnInput

# a segment as it is sent, `{"type": "text", "data": {"text": "…"}}` (`Segment.to_dict()`)
SegmentDict = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Target:
    kind: Literal["group", "private"]
    id: int  # the group id, or the user id of a private chat

    @classmethod
    def group(cls, group_id: int) -> Target:
        return cls("group", group_id)

    @classmethod
    def private(cls, user_id: int) -> Target:
        return cls("private", user_id)

    @classmethod
    def of(cls, turn: TurnInput) -> Target:
        """Where a turn's answers go: its group, or the private chat with its user."""
        return cls.private(turn.user_id) if turn.is_private else cls.group(turn.group_id)

    @property
    def is_private(self) -> bool:
        return self.kind == "private"

    @property
    def group_id(self) -> int:
        """The group the state keys this chat under; 0 for a private chat (as `TurnInput`)."""
        return 0 if self.is_private else self.id


class Sender(Protocol):
    async def send(self, target: Target, segments: list[SegmentDict]) -> int | None:
        """Send one message; the peer's message_id, or None when sending failed."""
        ...


__all__ = ["SegmentDict", "Sender", "Target"]
