"""Quick follow-ups folded into a member's reply turn.

While a member's turn is in flight (or inside the merge window), routing answers their further
messages with MERGE: the line is parked here instead of getting a turn of its own. The reply
turn drains the parked lines into its current message; lines that arrive while the model is
answering are drained after delivery and stored with the same session turn. Each entry keeps
the display text (`[图片]` for a picture) and the image urls, so a "@牛牛 这是啥" followed by
the picture reaches a vision model as one turn with its picture.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from pallas.core import state_keys
from pallas.core.message_text import turn_display_text
from pallas.core.state import StateStore
from pallas.core.turn import TurnInput
from pallas.routing.merge_wait import (
    MergeWaitConfig,
    MergeWaitDecision,
    OwnLine,
    needs_merge_wait,
    unfinished_reason,
)


class ChatConfigLike(Protocol):  # pallas.config.ChatConfig
    @property
    def merge_window_s(self) -> float: ...

    @property
    def merge_wait(self) -> MergeWaitConfig: ...


MAX_PARKED = 16
PARKED_TTL_S = 300.0
LINE_TIMES_KEPT = 8
LINE_TIMES_TTL_S = 60.0


@dataclass(frozen=True, slots=True)
class Drained:
    texts: tuple[str, ...] = ()
    image_urls: tuple[str, ...] = ()


class TurnMerges:
    def __init__(self, state: StateStore) -> None:
        self._state = state

    @staticmethod
    def key(turn: TurnInput) -> str:
        return state_keys.merge_parked(turn.bot_id, turn.group_id, turn.user_id)

    @staticmethod
    def lines_key(turn: TurnInput) -> str:
        return state_keys.merge_lines(turn.bot_id, turn.group_id, turn.user_id)

    async def note_line(self, turn: TurnInput, now: float) -> None:
        """Remember when this member's line arrived and whether it read finished (the burst
        rule of the merge wait)."""
        has_picture = bool(turn.image_urls) or turn.has_segment("image")
        finished = unfinished_reason(turn.text, has_picture=has_picture) is None
        entry = {"at": now, "finished": finished}
        await self._state.push(
            self.lines_key(turn), entry, maxlen=LINE_TIMES_KEPT, ttl=LINE_TIMES_TTL_S
        )

    async def wait_decision(
        self, turn: TurnInput, content_text: str, chat: ChatConfigLike, now: float
    ) -> MergeWaitDecision:
        """Wait the merge window only when the message looks unfinished (`merge_wait`)."""
        lines = [_recent_line(e) for e in await self._state.items(self.lines_key(turn))]
        has_picture = bool(turn.image_urls) or turn.has_segment("image")
        return needs_merge_wait(
            content_text,
            window_s=chat.merge_window_s,
            config=chat.merge_wait,
            has_picture=has_picture,
            recent_lines=lines,
            now=now,
        )

    async def park(self, turn: TurnInput) -> None:
        entry = {"text": turn_display_text(turn), "images": list(turn.image_urls)}
        await self._state.push(self.key(turn), entry, maxlen=MAX_PARKED, ttl=PARKED_TTL_S)

    async def drain(self, turn: TurnInput) -> Drained:
        # atomic read-and-clear: a line parked meanwhile (another process, or an await
        # between a read and a delete) is either in this drain or left for the next one
        entries = await self._state.take(self.key(turn))
        texts: list[str] = []
        images: list[str] = []
        for entry in entries:
            if isinstance(entry, Mapping):
                texts.append(str(entry.get("text", "")))
                images.extend(str(url) for url in entry.get("images") or ())
            else:  # a plain string parked by an older version
                texts.append(str(entry))
        return Drained(tuple(texts), tuple(dict.fromkeys(images)))

    async def current_text(
        self, turn: TurnInput, accumulated: Sequence[Mapping[str, Any]]
    ) -> tuple[str, tuple[str, ...]]:
        """This message plus the member's own accumulated and parked lines, in order, and the
        image urls of the parked lines."""
        earlier = [
            str(e.get("text", ""))
            for e in accumulated
            if int(e.get("user_id", 0)) == turn.user_id and e.get("text")
        ]
        parked = await self.drain(turn)
        shown = turn_display_text(turn)  # images as [图片], stickers as their summary
        text = "\n".join(t for t in (*earlier, shown, *parked.texts) if t.strip()) or shown
        return text, parked.image_urls

    async def with_late_lines(self, turn: TurnInput, current_text: str) -> str:
        """Lines that arrived while the model was answering belong to the same user turn
        (too late for the model to see their pictures)."""
        late = await self.drain(turn)
        return "\n".join([current_text, *late.texts]) if late.texts else current_text


def _recent_line(entry: object) -> OwnLine:
    """A stored line: `{"at", "finished"}`, or a bare time from an older version (finished)."""
    if isinstance(entry, Mapping):
        return OwnLine(float(entry.get("at", 0.0)), bool(entry.get("finished", True)))
    return OwnLine(float(entry))  # type: ignore[arg-type]
