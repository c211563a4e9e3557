"""The error list (`/console/errors`): every reply turn that failed after routing, newest first,
from the routing history (so it outlives a restart), with its reason in Chinese."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from fastapi import APIRouter, Request
from fastapi.responses import Response

from pallas.core.db.repositories.routes import RouteRecord
from pallas.features.reminders import MISSED, Reminder
from pallas.web.app import Console
from pallas.web.pages import clock_text, failure_reason_zh

PAGE_SIZE = 50
STAGE_ZH = {"llm": "模型调用", "prepare": "准备上下文", "turn": "回复流程"}


@dataclass(frozen=True, slots=True)
class FailureRow:
    id: int
    time: float
    bot_id: int
    group_id: int
    group_name: str
    user_id: int
    member: str  # card or nickname ("" when the message is not stored)
    message_id: int
    text: str
    stage: str  # the code
    stage_zh: str
    reason: str  # the code
    reason_zh: str
    turn_id: str  # the analyzer's turn ("" when no snapshot was kept)


def failure_rows(
    records: Iterable[RouteRecord],
    *,
    names: Mapping[int, str],
    members: Mapping[tuple[int, int, int], str],
    turns: Mapping[tuple[int, int], str],
) -> list[FailureRow]:
    """The list's rows (`members`: (bot, group, message id) → sender's name; `turns`: (group,
    message id) → the turn id of the failed turn's snapshot)."""
    return [
        FailureRow(
            id=r.id,
            time=r.time,
            bot_id=r.bot_id,
            group_id=r.group_id,
            group_name=names.get(r.group_id, ""),
            user_id=r.user_id,
            member=members.get((r.bot_id, r.group_id, r.message_id), ""),
            message_id=r.message_id,
            text=str(r.data.get("text") or ""),
            stage=r.stage,
            stage_zh=STAGE_ZH.get(r.stage, r.stage),
            reason=r.reason,
            reason_zh=failure_reason_zh(r.stage, r.reason),
            turn_id=turns.get((r.group_id, r.message_id), ""),
        )
        for r in records
    ]


@dataclass(frozen=True, slots=True)
class UnsentReminder:
    id: int
    group_id: int
    user_id: int
    text: str
    due: float
    status_zh: str
    note: str


def unsent_row(reminder: Reminder) -> UnsentReminder:
    status = "错过了（机器人离线太久）" if reminder.status == MISSED else "发送失败"
    return UnsentReminder(
        reminder.id, reminder.group_id, reminder.user_id, reminder.text or "（没说内容）",
        reminder.next_at, status, reminder.note,
    )  # fmt: skip


def error_pages(router: APIRouter, console: Console) -> None:
    @router.get("/errors")
    async def errors(request: Request, group: str = "", before: str = "") -> Response:
        session = await console.session(request)
        backend = session.backend
        group_id = int(group) if group.strip().isdigit() else None
        before_id = int(before) if before.strip().isdigit() else None
        records = await backend.failures(group_id=group_id, before_id=before_id, limit=PAGE_SIZE)
        scopes = sorted({(r.bot_id, r.group_id) for r in records})
        names, members, snaps, seen, today = await asyncio.gather(
            backend.group_names(),
            backend.queries.senders([(r.bot_id, r.group_id, r.message_id) for r in records]),
            asyncio.gather(*(backend.queries.snapshot_index(b, g, 200) for b, g in scopes)),
            backend.queries.scopes_seen(),
            backend.failure_counts(backend.now()),
        )
        turns = {
            (g, int(s["message_id"])): str(s["turn_id"])
            for (_, g), found in zip(scopes, snaps, strict=True)
            for s in found
            if str(s.get("outcome") or "").startswith("error")
        }
        rows = failure_rows(records, names=names, members=members, turns=turns)
        reminders = backend.reminders
        unsent = await reminders.unsent(group_id=group_id) if reminders is not None else []
        return console.render(
            "errors.html",
            session,
            page="errors",
            rows=rows,
            group=group.strip(),
            groups=sorted({g for _, g in seen}),
            names=names,
            today=sum(today.values()),
            today_here=sum(n for (_, g), n in today.items() if g == group_id),
            group_id_filter=group_id,
            more=rows[-1].id if len(rows) == PAGE_SIZE else None,
            clock=clock_text,
            unsent=[unsent_row(r) for r in unsent] if before_id is None else [],
        )
