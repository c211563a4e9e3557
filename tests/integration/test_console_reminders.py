"""The console's 提醒 page over a real runtime: pending, repeating and recent reminders of the
group (never another group's), cancel with CSRF and an audit line."""

from __future__ import annotations

import logging

import httpx
import pytest

from pallas.features.reminders import NewReminder, ReminderRepository
from pallas.runtime import PallasRuntime
from tests.integration import test_console_web as web
from tests.integration.test_console_web import BOT, GROUP, NOW, OTHER, login, message

runtime = web.runtime
client = web.client


async def test_the_reminders_page_lists_and_cancels(
    client: httpx.AsyncClient, runtime: PallasRuntime, caplog: pytest.LogCaptureFixture
) -> None:
    await runtime.repos.messages.add_many([message(1, NOW), message(2, NOW, group=OTHER)])
    repo = ReminderRepository(runtime.sessions)
    once = await repo.add(NewReminder(BOT, GROUP, 101, "交电费", NOW + 3600), now=NOW)
    daily = await repo.add(
        NewReminder(BOT, GROUP, 102, "吃药", NOW + 7200, rule="daily 22:00"), now=NOW
    )
    await repo.add(NewReminder(BOT, OTHER, 103, "别的群的", NOW + 60), now=NOW)
    csrf = await login(client)

    page = (await client.get(f"/console/g/{GROUP}/reminders")).text
    assert f'href="/console/g/{GROUP}/reminders"' in page
    pending = page.split('id="pending"')[1].split('id="repeating"')[0]
    repeating = page.split('id="repeating"')[1].split('id="recent"')[0]
    assert "交电费" in pending and f"#{once.id}" in pending and "吃药" not in pending
    assert "吃药" in repeating and "每天 22:00" in repeating
    assert "别的群的" not in page

    assert (
        await client.post(f"/console/g/{GROUP}/reminders/cancel", data={"reminder": once.id})
    ).status_code == 403, "no CSRF token: refused"
    caplog.set_level(logging.INFO, logger="pallas.console")
    done = await client.post(
        f"/console/g/{GROUP}/reminders/cancel", data={"reminder": str(once.id), "csrf": csrf}
    )
    assert done.status_code == 303
    page = (await client.get(done.headers["location"])).text
    assert f"已取消提醒 #{once.id}" in page
    recent = page.split('id="recent"')[1]
    assert "交电费" in recent and "已取消" in recent
    assert f"group {GROUP} reminder {once.id} cancelled" in caplog.text
    other = await client.post(
        f"/console/g/{OTHER}/reminders/cancel", data={"reminder": str(daily.id), "csrf": csrf}
    )
    assert "本群没有待发的提醒" in (await client.get(other.headers["location"])).text


async def test_reminders_that_did_not_go_out_are_on_the_errors_page(
    client: httpx.AsyncClient, runtime: PallasRuntime
) -> None:
    await runtime.repos.messages.add_many([message(1, NOW)])
    repo = ReminderRepository(runtime.sessions)
    missed = await repo.add(NewReminder(BOT, GROUP, 101, "交电费", NOW - 7200), now=NOW)
    kept = await repo.add(NewReminder(BOT, GROUP, 102, "吃药", NOW + 60), now=NOW)
    (claimed,) = await repo.claim_many([missed.id], token="t", now=NOW)
    await repo.finish(claimed.id, token="t", status="missed", now=NOW, fired=False, note="late")
    await login(client)
    page = (await client.get("/console/errors")).text
    section = page.split('id="unsent-reminders"')[1]
    assert f"#{missed.id}" in section and "交电费" in section and "错过了" in section
    assert f"#{kept.id}" not in section
