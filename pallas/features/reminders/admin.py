"""`/pallas reminders …`: admins list and cancel any reminder of their group.

/pallas reminders                 pending and repeating reminders (编号, who, next time)
/pallas reminders recent          the recently fired, missed, failed and cancelled ones
/pallas reminders cancel <编号>   cancel one (any member's) in this group
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TypeAlias

from pallas.core.admin_commands import AdminCommand, AdminContext
from pallas.core.clock import Clock
from pallas.features.reminders.clock_words import CHINA_TZ, format_when
from pallas.features.reminders.repository import (
    CANCELLED,
    DONE,
    FAILED,
    MISSED,
    Reminder,
    ReminderRepository,
)
from pallas.features.reminders.service import describe

USAGE = "用法：\n/pallas reminders\n/pallas reminders recent\n/pallas reminders cancel <编号>"
STATUS_ZH = {DONE: "已提醒", MISSED: "错过了", FAILED: "发送失败", CANCELLED: "已取消"}


@dataclass(frozen=True, slots=True)
class ReminderAdmin:
    repository: ReminderRepository | None
    clock: Clock


Ctx: TypeAlias = AdminContext[ReminderAdmin]


def _line(reminder: Reminder) -> str:
    return f"#{reminder.id} {reminder.user_id}：{describe(reminder)}"


def _recent_line(reminder: Reminder) -> str:
    at = reminder.fired_at or reminder.next_at
    when = format_when(datetime.fromtimestamp(at, CHINA_TZ))
    status = STATUS_ZH.get(reminder.status, reminder.status)
    return f"#{reminder.id} {reminder.user_id} {when} {status}：{reminder.text or '（没说内容）'}"


async def reminders(cmd: Ctx) -> str:
    repository = cmd.services.repository
    if repository is None:
        return "提醒功能没有启用"
    sub = cmd.args[0] if cmd.args else "list"
    if sub == "list":
        pending = await repository.for_group(cmd.group_id, limit=30)
        if not pending:
            return "本群没有待发的提醒"
        return "\n".join([f"本群待发的提醒（{len(pending)}）：", *map(_line, pending)])
    if sub == "recent":
        recent = await repository.for_group(
            cmd.group_id, statuses=(DONE, MISSED, FAILED, CANCELLED), limit=15
        )
        if not recent:
            return "本群最近没有提醒"
        return "\n".join(["本群最近的提醒：", *map(_recent_line, recent)])
    if sub == "cancel" and len(cmd.args) == 2 and cmd.args[1].lstrip("#").isdigit():
        reminder_id = int(cmd.args[1].lstrip("#"))
        gone = await repository.cancel(
            [reminder_id], group_id=cmd.group_id, user_id=None,
            now=cmd.services.clock.now(), by=cmd.user_id,
        )  # fmt: skip
        return f"已取消提醒 #{reminder_id}" if gone else f"本群没有待发的提醒 #{reminder_id}"
    return USAGE


COMMANDS: list[AdminCommand[ReminderAdmin]] = [
    AdminCommand(
        "reminders", "/pallas reminders [recent|cancel 编号]", "查看、取消本群的提醒", reminders
    )
]
