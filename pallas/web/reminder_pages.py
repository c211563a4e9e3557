"""A group's reminders (`/g/{group_id}/reminders`): pending and repeating ones with who set them
and when they fire next, the recently fired, missed, failed and cancelled ones with what
happened; an operator cancels a pending one from here (the same as `/pallas reminders cancel`,
with an audit line)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import quote

from fastapi import APIRouter, Form, Request
from fastapi.responses import RedirectResponse, Response

from pallas.features.reminders import (
    CANCELLED,
    CHINA_TZ,
    DONE,
    FAILED,
    MISSED,
    Reminder,
    Repeat,
    format_when,
)
from pallas.web.app import PREFIX, Console
from pallas.web.group_pages import seen_group

log = logging.getLogger("pallas.console")

STATUS_ZH = {
    "pending": "待发",
    "firing": "发送中",
    DONE: "已提醒",
    MISSED: "错过了",
    FAILED: "发送失败",
    CANCELLED: "已取消",
}


@dataclass(frozen=True, slots=True)
class ReminderView:
    id: int
    user_id: int
    text: str
    when: str  # the next firing (pending) or the last one / when it ended
    rule: str  # 每天 07:00 … ("" once)
    who: str  # 本人 / 大家
    status: str
    note: str
    created: str


def _view(reminder: Reminder) -> ReminderView:
    at = reminder.next_at if reminder.status in ("pending", "firing") else None
    at = at or reminder.fired_at or reminder.next_at
    repeat = Repeat.from_rule(reminder.rule) if reminder.rule else None
    return ReminderView(
        id=reminder.id,
        user_id=reminder.user_id,
        text=reminder.text or "（没说内容）",
        when=format_when(datetime.fromtimestamp(at, CHINA_TZ)),
        rule=repeat.describe() if repeat is not None else "",
        who="大家" if reminder.everyone else "本人",
        status=STATUS_ZH.get(reminder.status, reminder.status),
        note=reminder.note,
        created=format_when(datetime.fromtimestamp(reminder.created_at, CHINA_TZ)),
    )


def reminder_routes(router: APIRouter, console: Console) -> None:
    @router.get("/g/{group_id}/reminders")
    async def reminders(request: Request, group_id: str, notice: str = "") -> Response:
        session = await console.session(request)
        seen = await seen_group(console, session, group_id)
        if isinstance(seen, Response):
            return seen
        gid = seen[1]
        repository = session.backend.reminders
        pending = await repository.for_group(gid, limit=200) if repository else []
        recent = (
            await repository.for_group(gid, statuses=(DONE, MISSED, FAILED, CANCELLED), limit=30)
            if repository
            else []
        )
        return console.render(
            "reminders.html",
            session,
            page="reminders",
            group_id=gid,
            pending=[_view(r) for r in pending if not r.rule],
            repeating=[_view(r) for r in pending if r.rule],
            recent=[_view(r) for r in recent],
            notice=notice[:200],
            enabled=session.backend.fresh_config(gid).reminders.enabled,
        )

    @router.post("/g/{group_id}/reminders/cancel")
    async def cancel(request: Request, group_id: str, reminder: str = Form("")) -> Response:
        session = await console.checked(request)
        seen = await seen_group(console, session, group_id)
        if isinstance(seen, Response):
            return seen
        gid = seen[1]
        repository = session.backend.reminders
        notice = "提醒编号是一串数字"
        if repository is not None and reminder.strip().isdigit():
            rid = int(reminder.strip())
            gone = await repository.cancel(
                [rid], group_id=gid, user_id=None, now=session.backend.now(), by=0
            )
            notice = f"已取消提醒 #{rid}" if gone else f"本群没有待发的提醒 #{rid}"
            if gone:
                log.info("console: group %s reminder %s cancelled", gid, rid)
        return RedirectResponse(
            f"{PREFIX}/g/{gid}/reminders?notice={quote(notice)}", status_code=303
        )
