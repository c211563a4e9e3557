"""Admin commands: `/pallas <subcommand>` in a group (owner, admins, superusers) and in
private (superusers only; the commands then act on the private chats, group id 0).

Permission check and dispatch only; the commands live in `pallas.admin`. Matched by
NoneBot's own command rule (`COMMAND_START`, e.g. `/pallas`, also right after an @bot) and, when
`COMMAND_START` has no "/" (an operator's `["!"]`), by "/pallas" all the same; run at
order 5 in the one inbound entry (`pallas.onebot.edge`); a matched command always stops the
message (the old `on_command(..., block=True)`).
"""

from __future__ import annotations

import logging

from nonebot.plugin import PluginMetadata
from nonebot.rule import command

from pallas.admin import AdminContext, find_command, help_text
from pallas.core.admin_commands import slash_command_words
from pallas.onebot.arrival import Arrival
from pallas.onebot.permissions import is_group_admin
from pallas.onebot.plugin_parts import PALLAS, InboundHandler, PallasPlugin

log = logging.getLogger("pallas.admin")

ORDER = 5
COMMAND = ("pallas",)
# Registers "/pallas" (one prefix per COMMAND_START) in NoneBot's command trie: NoneBot then
# parses the command and its argument for every message, before the matchers run.
_rule = command(*COMMAND)


def command_words(arrival: Arrival) -> list[str] | None:
    """The words after the command: NoneBot's parse (any `COMMAND_START`, e.g. "!pallas"), or
    "/pallas …" when the operator's `COMMAND_START` has no "/"."""
    parsed = arrival.command()
    if parsed is not None:
        return parsed[1].extract_plain_text().split() if parsed[0] == COMMAND else None
    return slash_command_words(arrival.event.get_plaintext(), COMMAND[0])


async def handle_admin(arrival: Arrival) -> bool:
    words = command_words(arrival)
    if words is None:
        return False
    bot, event = arrival.bot, arrival.event
    await bot.send(event, await _answer(arrival, words))
    return True


async def _answer(arrival: Arrival, words: list[str]) -> str:
    event, app, group_id = arrival.event, arrival.app, arrival.group_id
    runtime = app.runtime
    if not is_group_admin(runtime.superusers, runtime.group_configs.get, event):
        log.info("refused /pallas from %s in group %s: not an admin", event.user_id, group_id)
        if not group_id:
            return "私聊里只有超级用户可以用这个命令哦"
        return "只有群主、管理员或超级用户可以用这个命令哦"
    name = words[0] if words else "status"
    command_ = find_command(name)
    if command_ is None:
        return f"可用的命令：\n{help_text()}"
    reply_to = event.reply.message_id if event.reply is not None else None
    cmd = AdminContext(
        services=app.admin,
        bot_id=int(event.self_id),
        group_id=group_id,
        user_id=event.user_id,
        args=tuple(words[1:]),
        reply_to=reply_to,
    )
    log.info("admin /pallas %s by %s in group %s", " ".join(words), event.user_id, group_id)
    try:
        text = await command_.handler(cmd)
    except Exception:
        log.exception("admin command %s failed in group %s", name, group_id)
        text = "命令执行出错了，详情见日志"
    return text or "好了"


__plugin_meta__ = PluginMetadata(
    name="pallas_admin",
    description="Per-group admin commands for Pallas",
    usage="/pallas help",
    extra={PALLAS: PallasPlugin(inbound=InboundHandler("pallas_admin", ORDER, handle_admin))},
)
