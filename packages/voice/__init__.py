"""The persona speaks: "牛牛说 你好" (any of the persona's names, then 说) answered with a
voice message — or with the text, and the reason in the route log, when the voice is out of
reach (budget, a failing TTS service, a refused send). Off unless `[voice] enabled`.

Runs before the member memory commands and the chat (order 7 in the one inbound entry) and
stops the message only when it was a speak command it answered. The logic lives in
`pallas.features.voice`.
"""

from __future__ import annotations

import logging

from nonebot.plugin import PluginMetadata

from pallas.core.sending import Target
from pallas.features.voice import parse_speak_command
from pallas.onebot.arrival import Arrival
from pallas.onebot.plugin_parts import PALLAS, InboundHandler, PallasPlugin
from pallas.onebot.sender import OneBotSender

log = logging.getLogger("pallas.voice")

ORDER = 7


async def handle_speak_command(arrival: Arrival) -> bool:
    app = arrival.app
    voice = app.voice
    if voice is None:
        return False
    config = app.runtime.group_configs.get(arrival.group_id)
    if not config.enabled or not config.voice.enabled or not config.voice.command.enabled:
        return False
    try:
        turn = arrival.turn()
    except ValueError:
        return False
    persona = app.runtime.personas.get(config.persona)
    names = app.addressing.aliases(persona, config)
    if parse_speak_command(turn.text, names) is None:
        return False
    if arrival.hold is not None:  # synthesis takes seconds: the loop is not held meanwhile
        arrival.hold.release()
    admins = {*app.runtime.superusers, *config.admins}
    is_admin = turn.user_id in admins or turn.speaker.is_admin
    try:
        outcome = await voice.speak_command(
            turn,
            config.voice,
            persona,
            names=names,
            is_admin=is_admin,
        )
    except Exception:
        log.exception("voice command failed (group %s, message %s)", turn.group_id,
                      turn.message_id)  # fmt: skip
        return False
    if outcome is None:
        return False
    sender, target = OneBotSender(arrival.bot), Target.of(turn)
    reason = outcome.route_reason
    sent_as = "none"
    if outcome.segment is not None:
        if await sender.send(target, [outcome.segment]) is not None:
            sent_as = "voice"
        else:  # the implementation refused the record: the words go out as text
            log.warning("voice command: the record was not sent in group %s, sending the text",
                        turn.group_id)  # fmt: skip
            reason = f"send_failed ({reason})"
    if sent_as != "voice" and outcome.text:
        segments = [{"type": "text", "data": {"text": outcome.text}}]
        if await sender.send(target, segments) is not None:
            sent_as = "text"
    # handled before routing: kept in the route log, so /pallas why and the console see it
    await app.runtime.routing.record_outside_decision(
        turn,
        config.routing,
        now=app.runtime.clock.now(),
        stage="voice_command",
        reason=f"{reason} → {sent_as}",
        outcome="voice" if sent_as == "voice" else "voice_fallback",
    )
    return True


__plugin_meta__ = PluginMetadata(
    name="voice",
    description="The persona speaks: 牛牛说 … answered with a voice message",
    usage="牛牛说 你好",
    extra={PALLAS: PallasPlugin(inbound=InboundHandler("voice", ORDER, handle_speak_command))},
)
