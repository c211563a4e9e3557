"""reply_gate: the hard filter before anything costs effort.

Verdicts:
- `skip`  — stay silent (`shut_up`, `bystander`, `face`, `empty`, `noise`, `short`,
  `incomplete`). `shut_up` also carries `silence_s` (drawn from the rng within
  `silence_min_s..silence_max_s`) for the caller to store as a silence period.
- `defer` — an unfinished sentence (`incomplete`) during a follow-up / mention: keep it and
  consider it with the member's next message instead of answering half a thought.
- `proceed` — continue to cooldown and necessity.

Addressed turns (private, @bot, reply to the bot, vocative alias) are only ever stopped by a
shut-up request. A bare "@bot" with nothing else is addressed and proceeds (`bare_address`);
the turn decision answers it with a FOLLOW_UP ("怎么啦？"). An image with an @ is a real question
(`addressed_media`). Follow-ups count as addressed for shut-up requests only: "闭嘴" right after
the bot answered this member is meant for the bot.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from enum import StrEnum

from pallas.core.turn import TurnInput
from pallas.routing.config import GateConfig
from pallas.routing.text_signals import is_incomplete, is_noise, is_shut_up, meaningful_length
from pallas.routing.triggers import TriggerResult

_STICKER_SEGMENTS = frozenset({"face", "mface", "image", "marketface", "bface", "sface"})
_OTHER_MEDIA_SEGMENTS = frozenset({"record", "video", "file", "json", "xml", "forward", "dice"})


class GateVerdict(StrEnum):
    PROCEED = "proceed"
    SKIP = "skip"
    DEFER = "defer"


@dataclass(frozen=True, slots=True)
class GateResult:
    verdict: GateVerdict
    reason: str
    silence_s: float | None = None  # only for reason "shut_up"

    @property
    def proceeds(self) -> bool:
        return self.verdict is GateVerdict.PROCEED


def has_image(turn: TurnInput) -> bool:
    return bool(turn.image_urls) or turn.has_segment("image")


def has_sticker(turn: TurnInput) -> bool:
    """A QQ face / market face (sticker); images are not counted here."""
    return any(seg.type in _STICKER_SEGMENTS - {"image"} for seg in turn.segments)


def _media_reason(turn: TurnInput) -> str:
    if has_image(turn) or any(seg.type in _STICKER_SEGMENTS for seg in turn.segments):
        return "face"
    if any(seg.type in _OTHER_MEDIA_SEGMENTS for seg in turn.segments):
        return "media"
    return "empty"


def _addressed(turn: TurnInput, trigger: TriggerResult) -> GateResult:
    if meaningful_length(trigger.content_text) > 0:
        return GateResult(GateVerdict.PROCEED, "addressed")
    if has_image(turn):
        return GateResult(GateVerdict.PROCEED, "addressed_media")
    if trigger.content_text.strip() or has_sticker(turn):
        return GateResult(GateVerdict.PROCEED, "addressed")  # "@bot ？？" / "@bot [face]"
    return GateResult(GateVerdict.PROCEED, "bare_address")


def evaluate_reply_gate(
    turn: TurnInput, trigger: TriggerResult, config: GateConfig, *, rng: random.Random
) -> GateResult:
    """Hard filter for one turn. Draws from `rng` only for a shut-up silence period."""
    content = trigger.content_text
    if (trigger.addressed or trigger.follow_up) and is_shut_up(
        content, max_chars=config.shut_up_max_chars
    ):
        silence = rng.uniform(config.silence_min_s, config.silence_max_s)
        return GateResult(GateVerdict.SKIP, "shut_up", silence_s=silence)
    if trigger.addressed:
        return _addressed(turn, trigger)
    if config.skip_bystander and turn.mentions_others:
        return GateResult(GateVerdict.SKIP, "bystander")
    length = meaningful_length(content)
    if length == 0 and not content.strip():
        reason = _media_reason(turn)
        if reason == "empty" or config.skip_media_only:
            return GateResult(GateVerdict.SKIP, reason)
        return GateResult(GateVerdict.PROCEED, "media")
    if is_noise(content):
        return GateResult(GateVerdict.SKIP, "noise")
    if length < config.min_chars:
        return GateResult(GateVerdict.SKIP, "short")
    if is_incomplete(content):
        if trigger.follow_up or trigger.mentioned:
            return GateResult(GateVerdict.DEFER, "incomplete")
        return GateResult(GateVerdict.SKIP, "incomplete")
    return GateResult(GateVerdict.PROCEED, "content")
