"""Member memory commands: "@帕拉斯 记住 我喜欢猫", "@帕拉斯 忘记我", "@帕拉斯 你记得我什么",
"@帕拉斯 你记得我是做哪行的吗".

Runs before the chat (order 8 in the one inbound entry) and stops the message only when it
was a memory command it answered; everything else (a memory question no stored fact answers)
goes on to `llm_chat` untouched. Reminder lines ("记得提醒我…", "记住明天提醒我…") were taken
before, by `packages/reminders` (order 7). The logic
lives in `pallas.features.memory_commands.member_commands`.
"""

from __future__ import annotations

import logging

from nonebot.plugin import PluginMetadata

from pallas.app_model import PallasApp
from pallas.core.turn import TurnInput
from pallas.features.memory_commands import GroupNames, handle_member_message
from pallas.onebot.arrival import Arrival
from pallas.onebot.plugin_parts import PALLAS, InboundHandler, PallasPlugin

log = logging.getLogger("pallas.memory")

ORDER = 8
# The group's recent lines whose senders' cards and nicknames name "other members" for a
# teaching (the message cache's warm window: no query on a warm group).
NAMES_FROM_LINES = 24


async def group_names(app: PallasApp, turn: TurnInput) -> GroupNames:
    """Who the speaker and the group's recent speakers are, by the names they go by here."""
    cache = app.chat.prepare.message_cache
    recent = (
        await cache.recent(turn.bot_id, turn.group_id, limit=NAMES_FROM_LINES)
        if turn.group_id
        else []
    )
    members = [(m.user_id, name) for m in recent for name in (m.card, m.nickname) if name]
    return GroupNames.of(turn.user_id, (turn.speaker.card, turn.speaker.nickname), members)


async def handle_memory_command(arrival: Arrival) -> bool:
    event, app = arrival.event, arrival.app
    if not event.to_me:
        return False
    config = app.runtime.group_configs.get(arrival.group_id)
    if not config.enabled:
        return False
    try:
        turn = arrival.turn()
    except ValueError:
        return False
    persona = app.runtime.personas.get(config.persona)
    await arrival.loads.ready()  # jieba's dictionary, loaded at start-up
    try:
        reply = await handle_member_message(
            app.memory,
            turn,
            aliases=app.addressing.aliases(persona, config),
            admins={*app.runtime.superusers, *config.admins},
            names=await group_names(app, turn),
            encoder=app.runtime.encoder.encoder,  # None while loading or off: shared words decide
        )
    except Exception:
        log.exception(
            "memory command failed (group %s, message %s)", turn.group_id, turn.message_id
        )
        return False
    if reply is None:
        return False
    # handled before routing: kept in the route log too, so /pallas why and the console see it
    await app.runtime.routing.record_outside_decision(
        turn,
        config.routing,
        now=app.runtime.clock.now(),
        stage="memory_command",
        reason=reply[:40],
        outcome="memory",
    )
    try:
        await arrival.bot.send(event, reply)
    except Exception:  # handled all the same: the chat must not answer it as well
        log.exception("memory command reply failed (group %s)", turn.group_id)
    return True


__plugin_meta__ = PluginMetadata(
    name="memory_commands",
    description="Members teach Pallas about themselves, or ask to be forgotten",
    usage="@帕拉斯 记住 我喜欢猫 / @帕拉斯 忘记我 / @帕拉斯 你记得我什么",
    extra={
        PALLAS: PallasPlugin(
            inbound=InboundHandler("memory_commands", ORDER, handle_memory_command)
        )
    },
)
