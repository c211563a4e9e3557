"""Step 7, deliver: the answer to the group like a person would send it.

The quote target (a QUOTE turn quotes only a live candidate), the sticker (from the group's
own pool, when the model named one), the bubbles with human-like pauses (the turn's `wait`:
the loop is free meanwhile), then routing's record of the bot reply (the follow-up window, the
QUOTE candidates, the member no longer in flight).
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pallas.core.clock import Clock
from pallas.core.sending import Target
from pallas.core.state import StateStore
from pallas.features.stickers import StickerService
from pallas.features.voice import VoiceService
from pallas.routing.evaluate import RouteOutcome
from pallas.routing.router import Router
from pallas.turn.contracts import ReplyTurn, TurnOutcome, TurnResult
from pallas.turn.parts.bubbles import ParsedReply
from pallas.turn.parts.delivery import DeliveryPlan, deliver

log = logging.getLogger("pallas.voice")


@dataclass
class DeliverStep:
    routing: Router
    stickers: StickerService
    state: StateStore  # the bot reply context (quote fallback)
    clock: Clock
    rng: random.Random  # the pauses between bubbles
    voice: VoiceService | None = None  # short replies spoken (`[voice]`)

    async def run(
        self, reply: ReplyTurn, parsed: ParsedReply, *, before_final: Callable[[], None]
    ) -> TurnOutcome:
        """`before_final` runs right before the last message is sent (the svar commit hold)."""
        turn, route, config = reply.turn, reply.route, reply.config
        quote_id = None
        if route.outcome is RouteOutcome.QUOTE and route.decision is not None:
            quote_id = await self.routing.resolve_quote_target(
                turn.bot_id, turn.group_id, route.decision.reply_message_id, turn.user_id
            )
        sticker = await self.stickers.for_reply(
            turn.bot_id, turn.group_id, parsed.sticker, config.chat.allow_sticker, config.stickers
        )
        if not parsed.bubbles and sticker is None:
            return TurnOutcome(TurnResult.SILENT, "sticker_unavailable")
        voice = await self._voice(reply, parsed) if sticker is None else None
        plan = DeliveryPlan(
            bot_id=turn.bot_id,
            target=Target.of(turn),
            bubbles=parsed.bubbles,
            quote_message_id=quote_id,
            at_user_id=turn.user_id if config.chat.at_sender_on_first_bubble else None,
            sticker=sticker.segment if sticker is not None else None,
            voice=voice,
        )
        delivery = await deliver(
            plan,
            reply.sender,
            self.state,
            rng=self.rng,
            sleep=reply.turn_ctx.wait,
            before_final=before_final,
        )
        if sticker is not None and delivery.complete and delivery.sent_ids:
            await self.stickers.remember_sent(sticker, delivery.sent_ids[-1])
        if delivery.sent_ids:
            await self.routing.record_bot_reply(
                turn.bot_id,
                turn.group_id,
                turn.user_id,
                delivery.sent_ids,
                self.clock.now(),
                config=config.routing,
            )
        outcome = TurnResult.DELIVERED if delivery.complete else TurnResult.PARTIAL
        return TurnOutcome(outcome, delivery.reason, delivery.sent_ids)

    async def _voice(self, reply: ReplyTurn, parsed: ParsedReply) -> dict[str, Any] | None:
        """The reply's `record` segment when `[voice]` speaks it (to a voice message, or by
        chance); None: the bubbles go out as text (a failed synthesis is one WARNING)."""
        config = reply.config.voice
        if self.voice is None or not config.enabled or not parsed.bubbles:
            return None
        try:
            outcome = await self.voice.speak_reply(
                reply.turn, config, parsed.bubbles, roll=self.rng.random()
            )
        except Exception:  # the text reply must go out whatever the voice does
            log.exception("voice reply failed in group %s", reply.turn.group_id)
            return None
        if not outcome.spoken and outcome.reason not in ("not_chosen", "voice_off"):
            log.info("reply in group %s sent as text: %s", reply.turn.group_id,
                     outcome.route_reason)  # fmt: skip
        return outcome.segment if outcome.spoken else None
