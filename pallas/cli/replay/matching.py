"""Matching the bot's own lines in a replayed log to the turns they deliver.

A bot line that follows an LLM decision (or a PASS-phrase decision) is claimed as that turn's
delivery; a bot line nobody claimed is fed back as an answer to whoever it addresses.
"""

from __future__ import annotations

from dataclasses import dataclass

from pallas.cli.replay.events import _Event
from pallas.core.turn import TurnInput
from pallas.onebot.convert import as_int, display_text


@dataclass(slots=True)
class _Claim:
    kind: str  # "reply" | "phrase" | "fed"
    user_id: int
    ids: list[int]
    source_line: int | None
    first: bool


class _BotLineMatcher:
    """The bot-line half of `_Replayer` (see `pallas.cli.replay.simulation`)."""

    events: list[_Event]
    bot_id: int
    bubble_gap_s: float
    authors: dict[tuple[int, int], int]  # (group, message id) → user id
    claims: dict[int, _Claim]  # bot event index → what it delivers
    last_member: dict[int, int]  # group → last member who spoke

    def find_bot_line(
        self,
        event: _Event,
        deadline: float,
        *,
        prefer: TurnInput | None = None,
        max_chars: int | None = None,
    ) -> _Event | None:
        candidates: list[_Event] = []
        for later in self.events[event.index + 1 :]:
            if later.time > deadline:
                break
            if not later.is_bot or later.claimed or later.group_id != event.group_id:
                continue
            if max_chars is not None and len(display_text(later.segments)) > max_chars:
                continue
            candidates.append(later)
        if not candidates:
            return None
        if prefer is not None:
            for cand in candidates:
                if self._answers(cand, prefer):
                    return cand
            # a line that explicitly answers someone else is not ours
            candidates = [c for c in candidates if not self._answers_other(c, prefer)]
        return candidates[0] if candidates else None

    def _answers(self, line: _Event, turn: TurnInput) -> bool:
        for seg in line.segments:
            data = seg.get("data") or {}
            if seg["type"] == "reply" and as_int(data.get("id")) == turn.message_id:
                return True
            if seg["type"] == "at" and as_int(data.get("qq")) == turn.user_id:
                return True
        return False

    def _answers_other(self, line: _Event, turn: TurnInput) -> bool:
        for seg in line.segments:
            data = seg.get("data") or {}
            if seg["type"] == "reply":
                author = self.authors.get((line.group_id, as_int(data.get("id")) or 0))
                if author is not None and author != turn.user_id:
                    return True
            if seg["type"] == "at" and as_int(data.get("qq")) not in (turn.user_id, self.bot_id):
                return True
        return False

    def claim(
        self,
        line: _Event,
        kind: str,
        user_id: int,
        source_line: int | None,
        *,
        bubbles: bool = True,
    ) -> None:
        group = [line]
        if bubbles:
            previous = line
            for later in self.events[line.index + 1 :]:
                if later.time - previous.time > self.bubble_gap_s:
                    break
                if later.is_bot and not later.claimed and later.group_id == line.group_id:
                    group.append(later)
                    previous = later
        ids = [e.message_id for e in group]
        for position, member in enumerate(group):
            member.claimed = True
            self.claims[member.index] = _Claim(kind, user_id, ids, source_line, position == 0)

    def _claim_unanswered(self, event: _Event) -> _Claim:
        user = self._addressee(event)
        self.claim(event, "fed", user, None)
        return self.claims[event.index]

    def _addressee(self, event: _Event) -> int:
        for seg in event.segments:
            data = seg.get("data") or {}
            if seg["type"] == "reply":
                author = self.authors.get((event.group_id, as_int(data.get("id")) or 0))
                if author is not None and author != self.bot_id:
                    return author
        for seg in event.segments:
            qq = as_int((seg.get("data") or {}).get("qq"))
            if seg["type"] == "at" and qq is not None and qq != self.bot_id:
                return qq
        return self.last_member.get(event.group_id, 0)
