"""The routing state of one group (or private chat), as a frozen snapshot, and its store keys.

Keys are namespaced by bot and scope: `route:{bot}:{scope}:{name}` where scope is `g{group}`
for a group and `p{user}` for a private chat (so private chats never share a cooldown).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pallas.product.llm.routing.ambient_stake import RecentLine

KEY_NAMES = (
    "silenced_until",  # float: end of the silence period after a shut-up request
    "last_turn_at",  # float: when the bot last started an LLM turn (cooldown anchor)
    "ambient_times",  # list[float]: ambient engagements within the budget window
    "last_quote_at",  # float: last native QUOTE decided in the group
    "candidates",  # list[int]: QUOTE candidates, newest last (maxlen quote.candidates)
    "bot_messages",  # bounded list[int]: ids of messages the bot sent (reply_to_bot)
    "bot_replies",  # bounded list[{"t", "user", "kind"}]: kind "reply" | "phrase"
    "last_phrase",  # str: last low-engagement phrase (never repeated)
    "pending",  # bounded list[dict]: messages accumulated during cooldown / deferred
    "decisions",  # bounded list[dict]: the latest decision records (to_log_dict)
    "recent_lines",  # bounded list[{"t", "user", "text", "reply_to", "to_bot"}] (stake rules)
)


def scope_of(group_id: int, user_id: int) -> str:
    return f"g{group_id}" if group_id else f"p{user_id}"


@dataclass(frozen=True, slots=True)
class RouteKeys:
    base: str

    @classmethod
    def of(
        cls, bot_id: int, group_id: int, user_id: int = 0, *, prefix: str = "route"
    ) -> RouteKeys:
        return cls(f"{prefix}:{bot_id}:{scope_of(group_id, user_id)}")

    def key(self, name: str) -> str:
        if name not in KEY_NAMES:
            raise KeyError(name)
        return f"{self.base}:{name}"

    def seen(self, message_id: int) -> str:
        """Claimed once per message id: a re-delivered event is not routed twice."""
        return f"{self.base}:seen:{message_id}"

    def turn_after(self, last_turn_at: float | None) -> str:
        """Claimed by the one LLM turn that follows the turn started at `last_turn_at` (the
        cooldown anchor it read): two turns deciding on the same snapshot cannot both start."""
        return f"{self.base}:turn_after:" + ("none" if last_turn_at is None else repr(last_turn_at))

    def unprompted(self, day: str) -> str:
        """Counter of the bot's unprompted utterances (unaddressed REPLY / phrase) on `day`."""
        return f"{self.base}:unprompted:{day}"

    def in_flight(self, user_id: int | None = None) -> str:
        """Marker of a member's turn between the decision and the delivery (prefix if None)."""
        return f"{self.base}:inflight:" + ("" if user_id is None else str(user_id))


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
    if not isinstance(raw, Mapping) or _float(raw.get("t")) is None:
        return None
    reply_to = raw.get("reply_to")
    return RecentLine(
        float(raw["t"]),
        int(raw.get("user", 0)),
        str(raw.get("text", "")),
        int(reply_to) if isinstance(reply_to, int) else None,
        bool(raw.get("to_bot")),
    )


def _float(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def state_from_raw(raw: Mapping[str, Any]) -> RouteState:
    """Build a snapshot from the raw StateStore values (missing / malformed values ignored)."""
    replies: Sequence[Any] = raw.get("bot_replies") or ()
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
        bot_replies=tuple(BotReply.from_json(r) for r in replies if isinstance(r, Mapping)),
        last_phrase=last_phrase if isinstance(last_phrase, str) else None,
        user_in_flight=bool(raw.get("user_in_flight")),
        recent_lines=tuple(
            line for line in map(_recent_line, raw.get("recent_lines") or ()) if line is not None
        ),
        unprompted_today=int(raw.get("unprompted_today") or 0),
    )
