"""Read-side values for stored chat data, shared by timeline, learning and memory code."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pallas.core.turn import anonymous_member_label


@dataclass(frozen=True, slots=True)
class StoredMessage:
    """One row of the `message` table: a group message seen or sent by the bot."""

    bot_id: int
    group_id: int
    message_id: int
    user_id: int
    time: float
    text: str
    raw_message: str = ""
    segments: tuple[dict[str, Any], ...] = ()
    card: str = ""
    nickname: str = ""
    role: str = "member"
    reply_to: int | None = None
    is_bot: bool = False
    row_id: int = 0
    line_key: str = ""  # `pallas.core.lines`: one stored copy per group line ("" none)
    # another plugin of the bot sent it from the account ("": the persona, or a member): such a
    # line is the plugin's, never the persona's words (timeline, learning, memory extraction)
    sent_by: str = ""

    @property
    def persona_line(self) -> bool:
        """The persona's own words: sent by the account, not by another plugin."""
        return self.is_bot and not self.sent_by

    @property
    def display_name(self) -> str:
        return self.card.strip() or self.nickname.strip() or anonymous_member_label(self.user_id)


@dataclass(frozen=True, slots=True)
class SpeakerCount:
    """How many messages one member posted in a window; `name` is already resolved for display."""

    user_id: int
    name: str
    count: int


@dataclass(frozen=True, slots=True)
class SessionTurn:
    """One row of `llm_chat_message`: a user's or the bot's turn in a chat session."""

    bot_id: int
    group_id: int  # 0 = private
    user_id: int
    role: str  # "user" | "assistant"
    content: str
    created_at: float
    is_summary: bool = False
    row_id: int = 0
    extra: dict[str, Any] = field(default_factory=dict)
