"""Member memory commands: "@帕拉斯 记住 我喜欢猫", "@帕拉斯 忘记我", "@帕拉斯 你记得我什么".

Runs before the chat (priority 8) and blocks the message only when it was a memory command it
handled; everything else goes on to `llm_chat` untouched. The logic lives in
`pallas.product.llm.memory.member_commands`.
"""

from __future__ import annotations

import asyncio
import logging

from nonebot import get_driver, on_message
from nonebot.adapters.onebot.v11 import GroupMessageEvent
from nonebot.matcher import Matcher
from nonebot.params import Depends
from nonebot.plugin import PluginMetadata

from pallas.app import PallasApp
from pallas.onebot.events import turn_from_event
from pallas.onebot.lifecycle import app_or_none, register_lifecycle
from pallas.product.llm.memory.member_commands import handle_member_message
from pallas.product.llm.memory.text import warm_up

__plugin_meta__ = PluginMetadata(
    name="memory_commands",
    description="Members teach Pallas about themselves, or ask to be forgotten",
    usage="@帕拉斯 记住 我喜欢猫 / @帕拉斯 忘记我 / @帕拉斯 你记得我什么",
)

log = logging.getLogger("pallas.memory")
register_lifecycle()

memory_commands = on_message(priority=8, block=False)


@get_driver().on_startup
async def _warm_up_tokenizer() -> None:
    """Load jieba's dictionary (~1 s) now, in a thread, not on the first reply."""
    await asyncio.to_thread(warm_up)


@memory_commands.handle()
async def handle_memory_command(
    event: GroupMessageEvent, matcher: Matcher, app: PallasApp | None = Depends(app_or_none)
) -> None:
    if app is None or not event.to_me:
        return
    config = app.runtime.group_configs.get(event.group_id)
    if not config.enabled:
        return
    try:
        turn = turn_from_event(event)
    except ValueError:
        return
    persona = app.runtime.personas.get(config.persona)
    try:
        reply = await handle_member_message(
            app.memory, turn, aliases=app.addressing.aliases(persona, config)
        )
    except Exception:
        log.exception(
            "memory command failed (group %s, message %s)", turn.group_id, turn.message_id
        )
        return
    if reply is None:
        return
    matcher.stop_propagation()
    await matcher.send(reply)
