"""Builders for routing tests: group turns as the OneBot edge would produce them."""

from __future__ import annotations

import random

from pallas.core.turn import Segment, Sender, TurnInput

BOT = 10_000
GROUP = 123_456
ALICE = 1_001
BOB = 1_002
ALIASES = ("牛牛", "帕拉斯", "Pallas")
T0 = 1_760_000_000.0


def turn(
    text: str = "",
    *,
    user: int = ALICE,
    group: int = GROUP,
    message_id: int = 1,
    at_bot: bool = False,
    at_users: tuple[int, ...] = (),
    reply_to: int | None = None,
    reply_to_user: int | None = None,
    faces: int = 0,
    image: bool = False,
    mface: bool = False,
    time: float = T0,
) -> TurnInput:
    """A turn; `text` is what the member typed (the edge removes @bot from `text`)."""
    segments: list[Segment] = []
    if reply_to is not None:
        segments.append(Segment("reply", {"id": str(reply_to)}))
    if at_bot:
        segments.append(Segment("at", {"qq": str(BOT)}))
    for uid in at_users:
        segments.append(Segment("at", {"qq": str(uid), "name": f"u{uid}"}))
    shown = "".join(f"@u{uid} " for uid in at_users) + text
    if text:
        segments.append(Segment("text", {"text": text}))
    segments.extend(Segment("face", {"id": "178"}) for _ in range(faces))
    if mface:
        segments.append(Segment("mface", {"summary": "[动画表情]"}))
    urls: tuple[str, ...] = ()
    if image:
        urls = ("https://example.invalid/a.png",)
        segments.append(Segment("image", {"url": urls[0]}))
    mentions = ((BOT,) if at_bot else ()) + at_users
    return TurnInput(
        bot_id=BOT,
        group_id=group,
        user_id=user,
        message_id=message_id,
        time=time,
        text=shown.strip(),
        segments=tuple(segments),
        sender=Sender(user_id=user, card=f"member{user}"),
        reply_to=reply_to,
        reply_to_user_id=reply_to_user,
        mentions=mentions,
        to_me=at_bot or group == 0 or (reply_to_user == BOT),
        image_urls=urls,
    )


class FixedRandom(random.Random):
    """A seeded Random whose `random()` returns scripted values (then repeats the last)."""

    def __init__(self, *values: float, seed: int = 7) -> None:
        super().__init__(seed)
        self._values = list(values) or [0.5]

    def random(self) -> float:
        return self._values.pop(0) if len(self._values) > 1 else self._values[0]
