"""Sending a parsed reply to the group like a person would: bubble by bubble, with pauses.

Only the first bubble may quote (and only a live candidate) or @ the member. Each delivered
bubble is remembered in the bot reply context; the result says whether *every* bubble went
out, because the session only records turns that the group actually saw in full.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pallas.core.clock import Sleep
from pallas.core.sending import SegmentDict, Sender, Target
from pallas.core.state import StateStore
from pallas.turn.parts.bot_reply_context import remember_bot_reply
from pallas.turn.parts.bubbles import bubble_delay

log = logging.getLogger("pallas.delivery")

STICKER_TEXT = "[动画表情]"  # how a sent sticker is remembered in the bot reply context


@dataclass(frozen=True, slots=True)
class DeliveryPlan:
    bot_id: int
    target: Target  # the turn's group, or the private chat with its user
    bubbles: tuple[str, ...]
    quote_message_id: int | None = None  # already resolved against live candidates
    at_user_id: int | None = None
    # a resolved sticker segment (image / mface from the group's pool), sent after the text as
    # its own message; the model's sticker *name* is never sent
    sticker: SegmentDict | None = None
    # a one-bubble reply spoken (`[voice]`): this `record` segment goes out instead of the
    # bubble's text; when the implementation refuses it, the text goes out after all
    voice: SegmentDict | None = None

    @property
    def group_id(self) -> int:
        return self.target.group_id


@dataclass(frozen=True, slots=True)
class DeliveryResult:
    sent_ids: tuple[int, ...]
    delivered_texts: tuple[str, ...]
    complete: bool
    reason: str


def first_bubble_segments(plan: DeliveryPlan, text: str) -> list[SegmentDict]:
    segments: list[SegmentDict] = []
    if plan.quote_message_id is not None:
        segments.append({"type": "reply", "data": {"id": str(plan.quote_message_id)}})
    if plan.at_user_id is not None:
        segments.append({"type": "at", "data": {"qq": str(plan.at_user_id)}})
        text = " " + text
    segments.append({"type": "text", "data": {"text": text}})
    return segments


async def deliver(
    plan: DeliveryPlan,
    sender: Sender,
    state: StateStore,
    *,
    rng: random.Random,
    sleep: Sleep = asyncio.sleep,
    before_final: Callable[[], None] | None = None,
) -> DeliveryResult:
    """`before_final` runs right before the last message is sent (the svar commit hold)."""
    texts: list[str] = list(plan.bubbles)
    if plan.sticker:
        texts.append(STICKER_TEXT)
    sent: list[int] = []
    delivered: list[str] = []
    voice_failed = False
    for index, text in enumerate(texts):
        if index > 0:
            await sleep(bubble_delay(text, rng))
        spoken = plan.voice is not None and index == 0 and len(plan.bubbles) == 1
        if plan.sticker and index == len(texts) - 1:
            segments = [dict(plan.sticker)]
        elif spoken and plan.voice is not None:
            segments = [dict(plan.voice)]
        elif index == 0:
            segments = first_bubble_segments(plan, text)
        else:
            segments = [{"type": "text", "data": {"text": text}}]
        if before_final is not None and index == len(texts) - 1:
            before_final()
        message_id = await sender.send(plan.target, segments)
        if message_id is None and spoken:
            log.warning("group %s: the voice reply was not sent, sending its text", plan.group_id)
            message_id = await sender.send(plan.target, first_bubble_segments(plan, text))
            voice_failed = True
        if message_id is None:
            log.warning(
                "group %s: bubble %d/%d not delivered; stopping",
                plan.group_id,
                index + 1,
                len(texts),
            )
            return DeliveryResult(tuple(sent), tuple(delivered), False, f"send_failed_at_{index}")
        sent.append(message_id)
        delivered.append(text)
        await remember_bot_reply(state, plan.bot_id, plan.group_id, message_id, text)
    if plan.voice is None:
        return DeliveryResult(tuple(sent), tuple(delivered), True, "delivered")
    reason = "delivered_text:voice_send_failed" if voice_failed else "delivered_voice"
    return DeliveryResult(tuple(sent), tuple(delivered), True, reason)


async def send_phrase(
    bot_id: int, target: Target, phrase: str, sender: Sender, state: StateStore
) -> int | None:
    """One local low-engagement phrase (PASS exit): no pauses, no quote."""
    message_id = await sender.send(target, [{"type": "text", "data": {"text": phrase}}])
    if message_id is not None:
        await remember_bot_reply(state, bot_id, target.group_id, message_id, phrase)
    return message_id


def joined_reply(texts: Sequence[str]) -> str:
    """How a multi-bubble reply is stored as one assistant session turn."""
    return "\n".join(t for t in texts if t)
