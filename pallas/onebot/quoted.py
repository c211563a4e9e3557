"""OneBot `get_msg` for the core: the segments of a quoted message the store does not have.

The core never imports NoneBot; the lifecycle hands `fetch_quoted_segments` to `start_app`,
which gives it to the reply step. Only used for vision-capable chat models,
only when the quoted message is not in the message store. Negative / > 2**31 ids are passed
through unchanged (new QQ ids are opaque signed integers).
"""

from __future__ import annotations

import logging
from typing import Any

import nonebot

from pallas.core.cq import normalise_segments
from pallas.onebot.convert import as_id

log = logging.getLogger("pallas.onebot")


async def fetch_quoted_segments(
    bot_id: int, group_id: int, message_id: int
) -> list[dict[str, Any]] | None:
    """The quoted message's segments, or None (bot offline, unknown id, another group)."""
    bot = nonebot.get_bots().get(str(bot_id))
    if bot is None:
        return None
    try:
        data = await bot.call_api("get_msg", message_id=message_id)
    except Exception as exc:
        log.info("get_msg %s in group %s failed: %r", message_id, group_id, exc)
        return None
    if not isinstance(data, dict):
        return None
    source_group = as_id(data.get("group_id"))
    if source_group is not None and group_id and source_group != group_id:
        log.warning("get_msg %s answered from group %s, not %s", message_id, source_group, group_id)
        return None
    segments, _problems = normalise_segments(data.get("message", ""))
    return segments
