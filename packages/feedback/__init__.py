"""Injection feedback: an admin answers a bot line with 「不可以」 → blame that turn, recall it.

Thin: convert the event, hand it to `pallas.features.learning.feedback_service`, recall the
rejected line when QQ allows it, and stop the message so the chat plugin does not answer it.
Runs after admin commands (order 5) and before the chat plugin (order 10) in the one inbound
entry (`pallas.onebot.edge`).
"""

from __future__ import annotations

import logging
from dataclasses import replace

from nonebot.adapters.onebot.v11 import Bot, GroupMessageEvent
from nonebot.plugin import PluginMetadata

from pallas.core.records import StoredMessage
from pallas.features.learning import (
    admin_ids,
    handle_negative_feedback,
    matched_negative_word,
    recall_allowed,
)
from pallas.onebot.arrival import Arrival
from pallas.onebot.convert import stored_message_from_turn
from pallas.onebot.plugin_parts import PALLAS, InboundHandler, PallasPlugin

log = logging.getLogger("pallas.learning.feedback")

ORDER = 8


def _quoted_from_event(event: GroupMessageEvent) -> StoredMessage | None:
    """The quoted message as the adapter fetched it (fallback when not stored yet)."""
    reply = event.reply
    if reply is None or reply.sender.user_id is None:
        return None
    return StoredMessage(
        bot_id=int(event.self_id),
        group_id=event.group_id,
        message_id=int(reply.message_id),
        user_id=int(reply.sender.user_id),
        time=float(reply.time),
        text=reply.message.extract_plain_text(),
        is_bot=int(reply.sender.user_id) == int(event.self_id),
    )


async def _recall(bot: Bot, group_id: int, quoted: StoredMessage, now: float) -> None:
    try:
        info = await bot.get_group_member_info(
            group_id=group_id, user_id=int(bot.self_id), no_cache=True
        )
        role = str(info.get("role") or "member")
    except Exception as exc:
        log.warning("group %s: cannot read the bot's role (%r); assuming member", group_id, exc)
        role = "member"
    if not recall_allowed(bot_role=role, quoted_time=quoted.time, now=now):
        log.info("group %s: message %s not recalled (role %s)", group_id, quoted.message_id, role)
        return
    try:
        await bot.delete_msg(message_id=quoted.message_id)
    except Exception as exc:
        log.warning("group %s: recalling message %s failed: %r", group_id, quoted.message_id, exc)


async def handle_feedback(arrival: Arrival) -> bool:
    bot, event, app = arrival.bot, arrival.event, arrival.app
    if not isinstance(event, GroupMessageEvent):
        return False  # feedback trains a group's learning: a private chat has none
    if not any(seg.type == "reply" for seg in event.original_message):
        return False
    runtime = app.runtime
    try:
        turn = arrival.turn()
    except ValueError:
        return False
    words = runtime.group_configs.get(event.group_id).learning.feedback_negative_words
    if turn.reply_to is None or matched_negative_word(turn.text, words) is None:
        return False
    await runtime.writer.flush()
    stored = await runtime.repos.messages.find_by_message_ids(
        turn.bot_id, turn.group_id, [turn.reply_to]
    )
    quoted = stored.get(turn.reply_to) or _quoted_from_event(event)
    reply = replace(stored_message_from_turn(turn), text=turn.text)
    result = await handle_negative_feedback(app.feedback, reply, quoted)
    banned = await app.stickers.ban_on_feedback(
        reply, quoted, admin_ids=admin_ids(app.feedback, turn.group_id), is_negative=True
    )  # 不可以 on a sticker (the bot's or a member's) bans it in this group
    if not result.handled and banned is None:
        return False
    if result.created and result.recall_message_id is not None and quoted is not None:
        try:
            await _recall(bot, event.group_id, quoted, runtime.clock.now())
        except Exception:  # handled all the same: the chat must not answer it
            log.exception("group %s: recall after feedback failed", event.group_id)
    return True


__plugin_meta__ = PluginMetadata(
    name="feedback",
    description="Admins reject a bot line with 「不可以」: its injected sources are penalised",
    usage="reply 不可以 to a bot message (owner / admin / superuser)",
    extra={PALLAS: PallasPlugin(inbound=InboundHandler("feedback", ORDER, handle_feedback))},
)
