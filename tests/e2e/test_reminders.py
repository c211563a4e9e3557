"""Reminders end to end (issue 48): the real bot process, a OneBot peer, the fake model.

A member's "提醒我…" is answered by the reminder path with the exact time — never by the chat
with a promise (no model call; `/pallas why` shows the reminder) — and kept as a row; the bot
goes down, the reminder comes due while it is down, and the restarted bot sends it once, late,
with a note, @-ing its owner.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import update

from pallas.core.db.engine import create_engine, session_factory
from pallas.core.db.models_reminders import ReminderRow
from pallas.features.reminders import DONE, PENDING, ReminderRepository
from tests.e2e.conftest import BOT_ID, at_bot, sent_texts
from tests.e2e.test_memory import wait_for_reply
from tests.harness.bot_process import BotProcess
from tests.harness.fake_openai import FakeOpenAI
from tests.harness.onebot_peer import ApiCall, OneBotPeer

pytestmark = pytest.mark.e2e

GROUP = 65_480_001
SUPERUSER, ALICE = 10001, 52_481


async def _rows(url: str, group: int) -> list[Any]:
    engine = create_engine(url)
    try:
        repo = ReminderRepository(session_factory(engine))
        return await repo.for_group(group, statuses=(PENDING, DONE, "firing"), limit=10)
    finally:
        await engine.dispose()


async def _move_due(url: str, reminder_id: int, next_at: float) -> None:
    engine = create_engine(url)
    try:
        async with session_factory(engine)() as session:
            await session.execute(
                update(ReminderRow).where(ReminderRow.id == reminder_id).values(next_at=next_at)
            )
            await session.commit()
    finally:
        await engine.dispose()


def _fired(peer: OneBotPeer) -> list[ApiCall]:
    return [c for c in peer.sends(GROUP) if "到时间啦" in "".join(sent_texts([c]))]


async def _until(check: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError(what)
        await asyncio.sleep(0.1)


async def test_a_reminder_is_kept_across_a_restart_and_fired_once(
    tmp_path: Path, bot: BotProcess, peer: OneBotPeer, fake_llm: FakeOpenAI
) -> None:
    await peer.send_event(peer.group_message(GROUP, ALICE, at_bot("十分钟后提醒我收衣服")))
    (reply,) = await wait_for_reply(peer, GROUP, 1)
    assert reply.startswith("好，") and reply.endswith("提醒你收衣服"), reply
    assert fake_llm.chat_requests() == [], "the chat never answered it"

    # the route log shows the reminder path
    await peer.send_event(peer.group_message(GROUP, SUPERUSER, "/pallas why 3"))
    why = (await wait_for_reply(peer, GROUP, 2))[-1]
    assert "提醒" in why, why

    (row,) = await _rows(bot.database_url, GROUP)
    assert row.status == PENDING and row.text == "收衣服" and row.user_id == ALICE

    # down; while it is down the reminder comes due (ten minutes ago: inside the grace)
    await peer.close()
    await bot.stop()
    await _move_due(bot.database_url, row.id, time.time() - 600)
    restarted = BotProcess(bot.workdir, env_overrides=bot.env_overrides, port=bot.port)
    await restarted.start()
    again = OneBotPeer(restarted.ws_url, self_id=BOT_ID, access_token=restarted.access_token)
    await again.connect()
    try:
        await _until(lambda: bool(_fired(again)), 15, "the reminder fired after the restart")
        await asyncio.sleep(3)  # three more polls: nothing more
        (fired,) = _fired(again)
        text = sent_texts([fired])[0]
        assert text.strip() == "到时间啦：收衣服（我刚才不在线，晚了10分钟）"
        message = fired.params["message"]
        assert any(s["type"] == "at" and str(s["data"]["qq"]) == str(ALICE) for s in message), (
            message
        )
        (done,) = await _rows(restarted.database_url, GROUP)
        assert done.status == DONE and done.fire_count == 1
        assert fake_llm.chat_requests() == []
    finally:
        await again.close()
        await restarted.stop()


async def test_an_unreadable_time_goes_to_the_cheap_model_and_a_dm_reminder_fires_in_private(
    bot: BotProcess, peer: OneBotPeer, fake_llm: FakeOpenAI
) -> None:
    from datetime import datetime, timedelta

    from pallas.features.reminders import CHINA_TZ
    from pallas.features.reminders.model_time import SYSTEM
    from tests.e2e.test_private_chat import wait_private

    soon = datetime.now(CHINA_TZ) + timedelta(minutes=10)
    fake_llm.enqueue(f'{{"when": "{soon:%Y-%m-%d %H:%M}"}}')
    await peer.send_event(peer.group_message(GROUP, ALICE, at_bot("过一会儿提醒我收衣服")))
    (reply,) = await wait_for_reply(peer, GROUP, 1)
    assert reply.startswith("好，") and f"{soon:%H:%M} 提醒你收衣服" in reply, reply
    (request,) = fake_llm.chat_requests()
    assert SYSTEM in request.system_prompt, "the cheap task, not the chat"

    # set in a private chat: fired as a DM (moved due, not waited for)
    await peer.send_event(peer.private_message(ALICE, "十分钟后提醒我关火"))
    (dm,) = await wait_private(peer, ALICE, 1)
    assert dm.startswith("好，") and dm.endswith("提醒你关火"), dm
    private = [r for r in await _rows(bot.database_url, 0)]
    assert [r.text for r in private] == ["关火"]
    await _move_due(bot.database_url, private[0].id, time.time() - 1)
    texts = await wait_private(peer, ALICE, 2, timeout=10)
    assert texts[-1] == "到时间啦：关火"
    assert len(fake_llm.chat_requests()) == 1
