"""The running bot builds each long-lived service once (pallas/app.py, the composition root).

Before the composition root a bot held four `MemoryService`s (context sources, extraction
hook, pipeline state, the member-command plugin) and built one more per admin command and per
console request; each keeps its own vector index and cache. Now every path uses the app's one.
"""

from __future__ import annotations

import pytest
from nonebug import App

from pallas.features.memory.service import MemoryService
from pallas.features.memory_commands.member_commands import REPLY_TAUGHT
from pallas.onebot import lifespan
from tests.plugins.conftest import (
    SUPERUSER,
    Pallas,
    TextWith,
    arrive,
    at_bot,
    group_message,
    onebot,
)

GROUP = 65_000_001
ALICE = 41_001


async def test_one_memory_service_serves_chat_member_and_admin_commands(
    app: App, pallas: Pallas, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[MemoryService] = []
    original = MemoryService.__init__

    def counting(self: MemoryService, *args: object, **kwargs: object) -> None:
        built.append(self)
        original(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(MemoryService, "__init__", counting)
    await pallas.start(llm=True)
    async with app.test_matcher() as ctx:
        bot = onebot(ctx)
        teach = await arrive(bot, group_message(GROUP, ALICE, at_bot("记住 我喜欢猫")))
        ctx.receive_event(bot, teach)
        ctx.should_call_send(teach, REPLY_TAUGHT, None)
        listing = await arrive(bot, group_message(GROUP, SUPERUSER, "/pallas memory list"))
        ctx.receive_event(bot, listing)
        ctx.should_call_send(listing, TextWith("喜欢猫"), None)
    shared = lifespan.get_app()
    assert built == [shared.memory]
    assert shared.turn_extras.memory is shared.memory
    assert shared.chat.prepare.stickers is shared.stickers
