"""Who may run admin commands in a group."""

from __future__ import annotations

from collections.abc import Callable

from nonebot.adapters.onebot.v11 import GroupMessageEvent, MessageEvent

from pallas.config import GroupConfig


def is_group_admin(
    superusers: frozenset[int], group_config: Callable[[int], GroupConfig], event: MessageEvent
) -> bool:
    """Superusers everywhere; group owner/admins and configured admins in their group."""
    if event.user_id in superusers:
        return True
    if not isinstance(event, GroupMessageEvent):
        return False
    if event.sender.role in ("owner", "admin"):
        return True
    return event.user_id in group_config(event.group_id).admins
