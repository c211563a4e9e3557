"""Members' reminders: "@帕拉斯 明天早上八点提醒我交电费", "半小时后叫我收衣服", "我的提醒",
"取消提醒 2"; admins' "每周五下午提醒大家交周报".

Runs before the memory commands and the chat (order 7 in the one inbound entry), on addressed
lines only (an @, the alias, a private chat), and stops the message when it was a reminder
line it answered — so a "提醒我…" is never answered by the chat with a promise nobody keeps.
Everything else goes on untouched. Once the app is up it starts the firing poll
(`pallas.features.reminders.ReminderFirer`), which sends through the connected accounts.
The logic lives in `pallas.features.reminders`.
"""

from __future__ import annotations

import logging
from typing import Any

import nonebot
from nonebot.adapters.onebot.v11 import Bot
from nonebot.plugin import PluginMetadata

from pallas.app_model import PallasApp
from pallas.app_wiring import reminder_firer_for
from pallas.core.sending import SegmentDict, Target
from pallas.features.reminders import ReminderFirer
from pallas.onebot.arrival import Arrival
from pallas.onebot.plugin_parts import PALLAS, InboundHandler, PallasPlugin
from pallas.onebot.sender import OneBotSender

log = logging.getLogger("pallas.reminders")

ORDER = 7  # before the memory commands (8): "记住明天提醒我…" is a reminder, not a fact


async def handle_reminder(arrival: Arrival) -> bool:
    event, app = arrival.event, arrival.app
    if not event.to_me or app.reminders is None:
        return False
    config = app.runtime.group_configs.get(arrival.group_id)
    if not config.enabled:
        return False
    try:
        turn = arrival.turn()
    except ValueError:
        return False
    persona = app.runtime.personas.get(config.persona)
    request = app.reminders.read(turn, app.addressing.aliases(persona, config))
    if request is None:
        return False
    is_admin = turn.speaker.is_admin or turn.user_id in {*app.runtime.superusers, *config.admins}
    if request.kind == "model" and arrival.hold is not None:
        arrival.hold.release()  # the cheap model may take seconds: the loop is not held for it
    try:
        reply = await app.reminders.handle(turn, request, is_admin=is_admin)
    except Exception:
        log.exception("reminder failed (group %s, message %s)", turn.group_id, turn.message_id)
        reply_text, outcome, reason = "提醒没设上，出了点问题，过会儿再试试吧", "error", "error"
    else:
        reply_text, outcome, reason = reply.text, reply.outcome, reply.reason
    # answered before routing: kept in the route log, so /pallas why and the console see it
    await app.runtime.routing.record_outside_decision(
        turn,
        config.routing,
        now=app.runtime.clock.now(),
        stage="reminder",
        reason=f"{request.kind}:{outcome}:{reason}"[:40],
        outcome="reminder",
    )
    log.info(
        "group %s: reminder line from %s read as %s → %s (%s)",
        turn.group_id, turn.user_id, request.kind, outcome, reason,
    )  # fmt: skip
    try:
        await arrival.bot.send(event, reply_text)
    except Exception:  # handled all the same: the chat must not answer it as well
        log.exception("reminder reply failed (group %s)", turn.group_id)
    return True


class NoneBotReminderSender:
    """Sends a firing through the connected NoneBot bot of an account (None when that
    account is not connected here or the send failed)."""

    @staticmethod
    def _bot(bot_id: int) -> Bot | None:
        bot: Any = nonebot.get_bots().get(str(bot_id))
        return bot if isinstance(bot, Bot) else None

    async def send(self, bot_id: int, target: Target, segments: list[SegmentDict]) -> int | None:
        bot = self._bot(bot_id)
        if bot is None:
            return None
        return await OneBotSender(bot).send(target, segments)


# The firer this plugin started, per app: the plugin owns it (started when the bot is ready,
# stopped at shut-down, before the app stops), so the app is never finished from here.
_FIRERS: dict[int, ReminderFirer] = {}


async def start_firing(app: PallasApp) -> None:
    if app.reminders is None or id(app) in _FIRERS:
        return
    firer = reminder_firer_for(app.runtime, app.reminders, NoneBotReminderSender())
    _FIRERS[id(app)] = firer
    firer.start()


async def stop_firing(app: PallasApp) -> None:
    firer = _FIRERS.pop(id(app), None)
    if firer is not None:
        await firer.stop()


__plugin_meta__ = PluginMetadata(
    name="reminders",
    description="Members' reminders, fired once at their time",
    usage="@帕拉斯 明天早上八点提醒我交电费 / 我的提醒 / 取消提醒 2",
    extra={
        PALLAS: PallasPlugin(
            inbound=InboundHandler("reminders", ORDER, handle_reminder),
            on_ready=(start_firing,),
            on_shutdown=(stop_firing,),
        )
    },
)
