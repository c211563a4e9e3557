"""Values that describe one incoming chat message, independent of NoneBot.

`pallas/onebot/` builds a `TurnInput` from a OneBot v11 event; everything after that
(routing, context, delivery) works on these frozen values only. A delivered reply ends as a
`CompletedTurn`, handed to the after-turn hooks (`AfterTurnHook`: summaries, memory
extraction), which the feature slices implement and the turn runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol


def _frozen_mapping(data: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(data or {}))


@dataclass(frozen=True, slots=True)
class Segment:
    """One OneBot message segment (`text`, `at`, `image`, `face`, `reply`, `mface`, ...)."""

    type: str
    data: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "data", _frozen_mapping(self.data))

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "data": dict(self.data)}


def anonymous_member_label(user_id: int) -> str:
    """How a member with neither card nor nickname is shown: a stable `群友#xxxx`."""
    return f"群友#{abs(user_id) % 10000:04d}"


@dataclass(frozen=True, slots=True)
class Sender:
    user_id: int
    card: str = ""
    nickname: str = ""
    role: str = "member"  # owner | admin | member

    @property
    def display_name(self) -> str:
        """Card, then nickname, then a stable anonymous label (never empty)."""
        return self.card.strip() or self.nickname.strip() or anonymous_member_label(self.user_id)

    @property
    def is_admin(self) -> bool:
        return self.role in ("owner", "admin")


@dataclass(frozen=True, slots=True)
class TurnInput:
    """One group (or private) message as the core sees it.

    `text` is the plain text of the message with the leading/trailing @bot and the reply
    segment removed (what the member actually said); `segments` keeps everything.
    """

    bot_id: int
    group_id: int  # 0 for private chats
    user_id: int
    message_id: int  # signed 64-bit, opaque; negative ids are normal on new QQ
    time: float  # unix seconds
    text: str
    segments: tuple[Segment, ...] = ()
    raw_message: str = ""
    sender: Sender | None = None
    reply_to: int | None = None  # message id this message quotes
    reply_to_user_id: int | None = None  # author of the quoted message, when known
    mentions: tuple[int, ...] = ()  # user ids @-mentioned anywhere in the message
    mentions_all: bool = False
    to_me: bool = False  # adapter's verdict: @bot, reply to bot, leading nickname, private
    image_urls: tuple[str, ...] = ()
    # the line as every account of the deployment sees it (`pallas.core.lines`); "" unknown
    line_key: str = ""

    @property
    def is_private(self) -> bool:
        return self.group_id == 0

    @property
    def speaker(self) -> Sender:
        return self.sender or Sender(user_id=self.user_id)

    @property
    def mentions_bot(self) -> bool:
        return self.bot_id in self.mentions

    @property
    def mentions_others(self) -> bool:
        return any(uid != self.bot_id for uid in self.mentions)

    @property
    def quotes_bot(self) -> bool:
        return self.reply_to_user_id is not None and self.reply_to_user_id == self.bot_id

    def has_segment(self, kind: str) -> bool:
        return any(seg.type == kind for seg in self.segments)


@dataclass(frozen=True, slots=True)
class CompletedTurn:
    """Handed to after-turn hooks (summaries, memory extraction, learning) once delivered.

    It carries no group config: a hook reads its own config slice through the getter it was
    built with (the composition root hands each one `group_id → its slice`), when it runs.
    The turn's config differs from that only by the cost ladder's shorter context, which no
    hook reads.
    """

    turn: TurnInput
    user_text: str
    reply_text: str
    sent_ids: tuple[int, ...]
    turn_id: str


class AfterTurnHook(Protocol):
    name: str

    async def after_turn(self, completed: CompletedTurn) -> None: ...
