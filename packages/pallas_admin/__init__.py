"""Admin commands: `/pallas <subcommand>` in a group (owner, admins, superusers).

Permission check and dispatch only; the commands live in `pallas.product.admin`.
"""

from __future__ import annotations

import logging

from nonebot import on_command
from nonebot.adapters.onebot.v11 import GroupMessageEvent, Message
from nonebot.params import CommandArg, Depends
from nonebot.plugin import PluginMetadata

from pallas.app import PallasApp
from pallas.onebot.lifecycle import app_or_none, register_lifecycle
from pallas.onebot.permissions import is_group_admin
from pallas.product.admin import AdminContext, find_command, help_text

__plugin_meta__ = PluginMetadata(
    name="pallas_admin",
    description="Per-group admin commands for Pallas",
    usage="/pallas help",
)

log = logging.getLogger("pallas.admin")
register_lifecycle()

admin = on_command("pallas", priority=5, block=True)


@admin.handle()
async def handle_admin(
    event: GroupMessageEvent,
    args: Message = CommandArg(),
    app: PallasApp | None = Depends(app_or_none),
) -> None:
    if app is None:
        return
    runtime = app.runtime
    if not is_group_admin(runtime.superusers, runtime.group_configs.get, event):
        log.info("refused /pallas from %s in group %s: not an admin", event.user_id, event.group_id)
        await admin.finish("只有群主、管理员或超级用户可以用这个命令哦")
    words = args.extract_plain_text().split()
    name = words[0] if words else "status"
    command = find_command(name)
    if command is None:
        await admin.finish(f"可用的命令：\n{help_text()}")
    reply_to = event.reply.message_id if event.reply is not None else None
    context = AdminContext(
        services=app.admin,
        bot_id=int(event.self_id),
        group_id=event.group_id,
        user_id=event.user_id,
        args=tuple(words[1:]),
        reply_to=reply_to,
    )
    log.info("admin /pallas %s by %s in group %s", " ".join(words), event.user_id, event.group_id)
    try:
        text = await command.handler(context)
    except Exception:
        log.exception("admin command %s failed in group %s", name, event.group_id)
        text = "命令执行出错了，详情见日志"
    await admin.finish(text or "好了")
