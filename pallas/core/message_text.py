"""How a member's turn reads as text: for the model (`turn_display_text`: images as `[图片]`,
stickers as their summary) and in the session (`turn_session_text` / `session_user_content`:
`[图片]:url=X` placeholders, so a later summary can still describe the pictures).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pallas.core.image_placeholders import (
    mface_text,
    placeholder_with_image_urls,
    sanitize_image_url,
    strip_placeholders,
)
from pallas.core.turn import TurnInput

Segments = Sequence[Mapping[str, Any]]


def image_segment_urls(segments: Segments) -> list[str]:
    """One entry per `image` segment: its http(s) URL, or "" when it has none."""
    urls: list[str] = []
    for seg in segments:
        if str(seg.get("type", "")) != "image":
            continue
        data = seg.get("data") or {}
        url = next(
            (
                clean
                for key in ("url", "file")
                if (clean := sanitize_image_url(str(data.get(key) or ""))) is not None
            ),
            "",
        )
        urls.append(url)
    return urls


def _turn_segments(turn: TurnInput) -> list[dict[str, Any]]:
    return [seg.to_dict() for seg in turn.segments]


def turn_session_text(turn: TurnInput) -> str:
    """The turn as the session stores it: text, sticker summaries, `[图片]:url=X` per image."""
    segments = _turn_segments(turn)
    stickers = [
        mface_text((s.get("data") or {}).get("summary")) for s in segments if s["type"] == "mface"
    ]
    base = " ".join(p for p in (turn.text.strip(), *stickers) if p)
    return placeholder_with_image_urls(base, image_segment_urls(segments))


def turn_display_text(turn: TurnInput) -> str:
    """The turn as the model reads it: images as `[图片]`, stickers as their summary.

    A message without images or stickers is returned unchanged.
    """
    if not any(seg.type in ("image", "mface") for seg in turn.segments):
        return turn.text
    return strip_placeholders(turn_session_text(turn))


def session_user_content(user_text: str, turn: TurnInput) -> str:
    """`user_text` (the merged turn as shown to the model) as the session row stores it.

    Placeholders typed by the member collapse to `[图片]` (they can not pose as images); this
    message's own images become `[图片]:url=X`.
    """
    safe = strip_placeholders(user_text)
    shown = turn_display_text(turn)
    if shown == turn.text:
        return safe
    stored = turn_session_text(turn)
    if not shown or shown == stored or shown not in safe:
        return safe
    return safe.replace(shown, stored, 1)
