"""The routing state of one group (or private chat), as a frozen snapshot, and its store keys.

Keys are namespaced by bot and scope: `route:{bot}:{scope}:{name}` where scope is `g{group}`
for a group and `p{user}` for a private chat (so private chats never share a cooldown); they
are built by `RouteKeys` in the key registry (`pallas.core.state_keys`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pallas.routing.ambient_stake import RecentLine


@dataclass(frozen=True, slots=True)
class BotReply:
    t: float
    user: int
    kind: str = "reply"  # "reply" (an LLM answer) | "phrase" (low-engagement phrase)

    def to_json(self) -> dict[str, Any]:
        return {"t": self.t, "user": self.user, "kind": self.kind}

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> BotReply:
        return cls(float(raw["t"]), int(raw.get("user", 0)), str(raw.get("kind", "reply")))


@dataclass(frozen=True, slots=True)
class RouteState:
    silenced_until: float | None = None
    last_turn_at: float | None = None
    ambient_times: tuple[float, ...] = ()
    last_quote_at: float | None = None
    candidates: tuple[int, ...] = ()
    bot_messages: tuple[int, ...] = ()
    bot_replies: tuple[BotReply, ...] = ()
    last_phrase: str | None = None
    user_in_flight: bool = False  # this member already has a turn being answered
    recent_lines: tuple[RecentLine, ...] = ()  # earlier member lines, newest last
    unprompted_today: int = 0  # unaddressed REPLY / phrases today (daily cap)

    def recent_bot_replies(self, now: float, window_s: float) -> int:
        """Bot replies and phrases in the group within `window_s`."""
        return sum(1 for r in self.bot_replies if 0 <= now - r.t <= window_s)

    def last_reply_to_user(self, user_id: int) -> float | None:
        """Time of the bot's last real answer to this member (phrases do not count)."""
        times = [r.t for r in self.bot_replies if r.user == user_id and r.kind == "reply"]
        return max(times) if times else None

    def follow_up_anchor(self, user_id: int, max_others: int) -> float | None:
        """The bot's last answer to this member while they may still be following it up:
        None once `max_others` lines of other members came after it (the group moved on)."""
        answered = self.last_reply_to_user(user_id)
        if answered is None:
            return None
        others = sum(1 for line in self.recent_lines if line.t > answered and line.user != user_id)
        return None if others >= max_others else answered

    def back_and_forth(self, user_id: int, now: float, window_s: float, min_replies: int) -> bool:
        answers = sum(
            1
            for r in self.bot_replies
            if r.user == user_id and r.kind == "reply" and 0 <= now - r.t <= window_s
        )
        return answers >= min_replies


def recent_line_json(
    t: float, user: int, text: str, reply_to: int | None, to_bot: bool = False
) -> dict[str, Any]:
    return {"t": t, "user": user, "text": text[:40], "reply_to": reply_to, "to_bot": to_bot}


def _recent_line(raw: Any) -> RecentLine | None:
    if not isinstance(raw, Mapping):
        return None
    t = raw.get("t")
    if not isinstance(t, int | float):
        return None
    reply_to = raw.get("reply_to")
    return RecentLine(
        float(t),
        int(raw.get("user", 0)),
        str(raw.get("text", "")),
        int(reply_to) if isinstance(reply_to, int) else None,
        bool(raw.get("to_bot")),
    )


def _float(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def state_from_raw(
    raw: Mapping[str, Any], bot_replies: tuple[BotReply, ...] | None = None
) -> RouteState:
    """Build a snapshot from the raw StateStore values (missing / malformed values ignored);
    `bot_replies`: the raw list already parsed (the engine's `BotReplyMemo`)."""
    replies: Sequence[Any] = raw.get("bot_replies") or ()
    if bot_replies is None:
        bot_replies = tuple(BotReply.from_json(r) for r in replies if isinstance(r, Mapping))
    last_phrase = raw.get("last_phrase")
    return RouteState(
        silenced_until=_float(raw.get("silenced_until")),
        last_turn_at=_float(raw.get("last_turn_at")),
        ambient_times=tuple(
            float(t) for t in raw.get("ambient_times") or () if _float(t) is not None
        ),
        last_quote_at=_float(raw.get("last_quote_at")),
        candidates=tuple(int(m) for m in raw.get("candidates") or ()),
        bot_messages=tuple(int(m) for m in raw.get("bot_messages") or ()),
        bot_replies=bot_replies,
        last_phrase=last_phrase if isinstance(last_phrase, str) else None,
        user_in_flight=bool(raw.get("user_in_flight")),
        recent_lines=tuple(
            line for line in map(_recent_line, raw.get("recent_lines") or ()) if line is not None
        ),
        unprompted_today=int(raw.get("unprompted_today") or 0),
    )
