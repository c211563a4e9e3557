"""OneBot v11 event payloads (plain dicts) → core values.

Works on the JSON dict so that the live adapter and `pallas replay` share one conversion.
"""

from __future__ import annotations

import logging
from typing import Any

from pallas.core.cq import SEGMENT_PLACEHOLDERS, normalise_segments, to_cq
from pallas.core.records import StoredMessage
from pallas.core.storable import fits_int64, storable_text, storable_value
from pallas.core.turn import Segment, Sender, TurnInput

log = logging.getLogger("pallas.onebot")


def as_int(value: Any, default: int | None = None) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):  # OverflowError: int(inf)
        return default


def as_id(value: Any) -> int | None:
    """A QQ id or message id: an int (or its decimal string) that fits 64 bits, else None
    (what a column can store; a bigger one names nothing)."""
    if isinstance(value, str) and len(value) > 24:
        return None
    number = as_int(value) if not isinstance(value, (bool, float)) else None
    return number if fits_int64(number) else None


def display_text(segments: list[dict[str, Any]]) -> str:
    """What a member sees: text, `@name`, and short placeholders for media."""
    parts = []
    for seg in segments:
        kind, data = seg["type"], seg.get("data") or {}
        if kind == "text":
            parts.append(str(data.get("text", "")))
        elif kind == "at":
            qq = str(data.get("qq", ""))
            parts.append("@全体成员" if qq == "all" else f"@{data.get('name') or qq}")
        elif kind == "mface":
            parts.append(str(data.get("summary") or "[表情]"))
        elif kind in SEGMENT_PLACEHOLDERS:
            parts.append(SEGMENT_PLACEHOLDERS[kind])
    return "".join(parts).strip()


def spoken_text(segments: list[dict[str, Any]], bot_id: int) -> str:
    """Only what the member typed: text segments and @others (no @bot, no reply marker)."""
    parts = []
    for seg in segments:
        kind, data = seg["type"], seg.get("data") or {}
        if kind == "text":
            parts.append(str(data.get("text", "")))
        elif kind == "at" and as_int(data.get("qq")) != bot_id:
            qq = str(data.get("qq", ""))
            parts.append("@全体成员 " if qq == "all" else f"@{data.get('name') or qq} ")
    return "".join(parts).strip()


def _image_urls(segments: list[dict[str, Any]]) -> tuple[str, ...]:
    urls = []
    for seg in segments:
        if seg["type"] == "image":
            url = str((seg.get("data") or {}).get("url") or "")
            if url.startswith(("http://", "https://")):
                urls.append(url)
    return tuple(urls)


def _reply_id(segments: list[dict[str, Any]]) -> int | None:
    for seg in segments:
        if seg["type"] == "reply":
            return as_id((seg.get("data") or {}).get("id"))
    return None


def _unix_time(value: Any) -> float:
    """The event's time in seconds; 0 (unknown) for what cannot be one. The adapter already
    replaced such a time with the time the frame was read (`event_parse.repair_message`)."""
    stamp = as_int(value, 0) or 0
    return float(stamp) if 0 <= stamp < 2**32 else 0.0


def turn_input_from_event(
    event: dict[str, Any],
    *,
    to_me: bool = False,
    reply_to_user_id: int | None = None,
) -> TurnInput:
    """Build a `TurnInput` from a OneBot v11 `message` event payload.

    Raises `ValueError` for payloads without the ids every turn needs.
    """
    bot_id = as_id(event.get("self_id"))
    user_id = as_id(event.get("user_id"))
    message_id = as_id(event.get("message_id"))
    if bot_id is None or user_id is None or message_id is None:
        raise ValueError("message event without self_id / user_id / message_id")
    group_id = as_id(event.get("group_id")) or 0
    segments, problems = normalise_segments(event.get("message", event.get("raw_message", "")))
    if problems:
        log.warning("event %s: %s", message_id, "; ".join(problems))
    raw = event.get("raw_message")
    given = event.get("sender")
    sender: dict[str, Any] = given if isinstance(given, dict) else {}
    mentions = tuple(
        uid
        for seg in segments
        if seg["type"] == "at" and (uid := as_id((seg.get("data") or {}).get("qq"))) is not None
    )
    return TurnInput(
        bot_id=bot_id,
        group_id=group_id,
        user_id=user_id,
        message_id=message_id,
        time=_unix_time(event.get("time")),
        text=spoken_text(segments, bot_id),
        segments=tuple(Segment(s["type"], s.get("data") or {}) for s in segments),
        raw_message=storable_text(raw) if isinstance(raw, str) and raw else to_cq(segments),
        sender=Sender(
            user_id=user_id,
            card=str(sender.get("card") or ""),
            nickname=str(sender.get("nickname") or ""),
            role=str(sender.get("role") or "member"),
        ),
        reply_to=_reply_id(segments),
        reply_to_user_id=reply_to_user_id,
        mentions=mentions,
        mentions_all=any(
            s["type"] == "at" and str((s.get("data") or {}).get("qq")) == "all" for s in segments
        ),
        to_me=to_me or group_id == 0,
        image_urls=_image_urls(segments),
    )


def stored_message_from_turn(turn: TurnInput, *, is_bot: bool = False) -> StoredMessage:
    segments = [s.to_dict() for s in turn.segments]
    sender = turn.speaker
    return StoredMessage(
        bot_id=turn.bot_id,
        group_id=turn.group_id,
        message_id=turn.message_id,
        user_id=turn.user_id,
        time=turn.time,
        text=display_text(segments),
        raw_message=turn.raw_message,
        segments=tuple(segments),
        card=sender.card,
        nickname=sender.nickname,
        role=sender.role,
        reply_to=turn.reply_to,
        is_bot=is_bot,
        line_key=turn.line_key,
    )


def stored_message_from_sent(
    *,
    bot_id: int,
    group_id: int,
    message_id: int,
    segments: list[dict[str, Any]],
    time: float,
    nickname: str = "",
    sent_by: str = "",
) -> StoredMessage:
    """The bot's own outgoing message, recorded with the id the peer returned; `sent_by`: the
    other plugin that sent it ("" for Pallas's own)."""
    segments = storable_value(segments)  # a plugin may send anything: store what it means
    return StoredMessage(
        bot_id=bot_id,
        group_id=group_id,
        message_id=message_id,
        user_id=bot_id,
        time=time,
        text=display_text(segments),
        raw_message=to_cq(segments),
        segments=tuple(segments),
        nickname=nickname,
        role="member",
        reply_to=_reply_id(segments),
        is_bot=True,
        sent_by=sent_by,
    )
