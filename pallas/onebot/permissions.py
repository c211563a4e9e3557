"""Who may run admin commands in a group."""

from __future__ import annotations

from nonebot.adapters.onebot.v11 import GroupMessageEvent, MessageEvent

from pallas.runtime import PallasRuntime


def is_group_admin(runtime: PallasRuntime, event: MessageEvent) -> bool:
    """Superusers everywhere; group owner/admins and configured admins in their group."""
    if event.user_id in runtime.superusers:
        return True
    if not isinstance(event, GroupMessageEvent):
        return False
    if event.sender.role in ("owner", "admin"):
        return True
    return event.user_id in runtime.group_configs.get(event.group_id).admins
