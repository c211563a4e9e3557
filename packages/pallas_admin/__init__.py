"""Admin commands: `/pallas <subcommand>` in a group (owner, admins, superusers).

Each subcommand is a thin adapter over a core function; the same data is available from the
`pallas` CLI on the server.
"""

from __future__ import annotations

import logging

from nonebot import on_command
from nonebot.adapters.onebot.v11 import Bot, GroupMessageEvent, Message
from nonebot.params import CommandArg
from nonebot.plugin import PluginMetadata

from pallas.onebot.lifecycle import register_lifecycle, runtime_or_none
from pallas.onebot.permissions import is_group_admin

__plugin_meta__ = PluginMetadata(
    name="pallas_admin",
    description="Per-group admin commands for Pallas",
    usage="/pallas status",
)

log = logging.getLogger("pallas.admin")
register_lifecycle()

admin = on_command("pallas", priority=5, block=True)


@admin.handle()
async def handle_admin(bot: Bot, event: GroupMessageEvent, args: Message = CommandArg()) -> None:
    runtime = runtime_or_none()
    if runtime is None:
        return
    if not is_group_admin(runtime, event):
        log.info("refused /pallas from %s in group %s: not an admin", event.user_id, event.group_id)
        await admin.finish("只有群主、管理员或超级用户可以用这个命令哦")
    words = args.extract_plain_text().split()
    sub = words[0] if words else "status"
    if sub == "status":
        await admin.finish(await _status(runtime, event.group_id))
    await admin.finish(f"不认识的子命令：{sub[:20]}。可用：status")


async def _status(runtime, group_id: int) -> str:  # type: ignore[no-untyped-def]
    config = runtime.group_configs.get(group_id)
    await runtime.writer.flush()
    stored = await runtime.repos.messages.count(group_id=group_id)
    lines = [
        f"本群已记录消息 {stored} 条",
        f"发言：{'开启' if config.enabled else '关闭'}；人设：{config.persona}",
        f"回复模型：{'已配置' if runtime.settings.replies_enabled else '未配置 API Key，暂不回复'}",
    ]
    errors = runtime.group_configs.errors()
    if errors:
        lines.append("配置文件有问题（仍在使用上一次正确的版本）：")
        lines.extend(f"- {name}" for name in errors)
    return "\n".join(lines)
