"""A member's reminder line, answered: set (with the exact time in the confirmation), list,
cancel — or a question back when the time cannot be read or has gone. Nothing here sends: the
plugin sends the reply, `ReminderFirer` fires the rows.

The limits (`[reminders]`): active reminders per member, repeating ones per group, the
shortest repeat interval, how far ahead; 提醒大家 only from admins and only in a group.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from pallas.core.clock import Clock
from pallas.core.turn import TurnInput
from pallas.features.reminders.clock_words import CHINA_TZ, china_now, format_when
from pallas.features.reminders.config import ReminderConfig
from pallas.features.reminders.model_time import ModelTimeReader
from pallas.features.reminders.parse import ReminderRequest, read_request
from pallas.features.reminders.repository import NewReminder, Reminder, ReminderRepository
from pallas.features.reminders.schedule import Repeat

log = logging.getLogger("pallas.reminders")

REPLY_DISABLED = "这个群没有开提醒功能哦，到时候我可提醒不了你"
REPLY_ASK_TIME = "要什么时候提醒你呀？说个具体时间吧，比如“明天早上八点提醒我{what}”"
REPLY_BAD_TIME = "这个时间我没看懂，换个说法再告诉我一次吧，比如“明天早上八点提醒我{what}”"
REPLY_PAST = "{when}已经过去啦，要换个时间吗？"
REPLY_TOO_FAR = "太久以后的事我怕记不住，{days}天以内的提醒我才接哦"
REPLY_TOO_MANY = "你已经有{n}个提醒啦，先取消几个（“取消提醒 编号”）再设新的吧"
REPLY_TOO_MANY_REPEATING = "群里的重复提醒已经有{n}个啦，先取消一些再设吧"
REPLY_TOO_OFTEN = "提醒得太频繁会刷屏的，重复提醒最少间隔{minutes}分钟哦"
REPLY_EVERYONE_ADMIN = "提醒大家要管理员来设置哦，我可以只提醒你自己～"
REPLY_EVERYONE_PRIVATE = "私聊里没有“大家”呀，要提醒群里的话去群里跟我说吧"
REPLY_TOO_LONG = "要提醒的内容太长啦，{chars}字以内说清楚就好"
REPLY_SET = "好，{when} 提醒{whom}{what}"
REPLY_SET_REPEAT = "好，{rule} 提醒{whom}{what}，第一次是{when}"
REPLY_NONE = "你现在没有提醒哦"
REPLY_LIST_HEAD = "你的提醒："
REPLY_WHICH = "你有{n}个提醒，要取消哪个？回复“取消提醒 编号”就好：\n{lines}"
REPLY_NO_SUCH = "没有第{n}个提醒哦，说“我的提醒”看看编号吧"
REPLY_CANCELLED = "好，{what}的提醒取消啦"
REPLY_CANCELLED_ALL = "好，你的{n}个提醒都取消啦"


@dataclass(frozen=True, slots=True)
class ReminderReply:
    text: str
    outcome: str  # set | list | cancel | ask | refused
    reason: str
    reminder: Reminder | None = None


def describe(reminder: Reminder) -> str:
    """One line of a listing: "12月7日（周一）08:00 交电费" / "每天 07:00 吃早饭（下次 …）"."""
    when = format_when(datetime.fromtimestamp(reminder.next_at, CHINA_TZ))
    what = reminder.text or "（没说内容）"
    prefix = "【大家】" if reminder.everyone else ""
    repeat = Repeat.from_rule(reminder.rule) if reminder.rule else None
    if repeat is not None:
        return f"{prefix}{repeat.describe()} {what}（下次 {when}）"
    return f"{prefix}{when} {what}"


class ReminderService:
    def __init__(
        self,
        repository: ReminderRepository,
        *,
        clock: Clock,
        config: Callable[[int], ReminderConfig],
        model_time: ModelTimeReader | None = None,
    ) -> None:
        self.repository = repository
        self.clock = clock
        self.config = config
        self.model_time = model_time

    def read(self, turn: TurnInput, aliases: Iterable[str] = ()) -> ReminderRequest | None:
        """The request a line makes (pure rules, no I/O): None when it is no reminder line."""
        if turn.user_id == turn.bot_id:
            return None
        return read_request(turn.text, china_now(self.clock.now()), aliases)

    async def handle(
        self,
        turn: TurnInput,
        request: ReminderRequest,
        *,
        is_admin: bool = False,
    ) -> ReminderReply:
        cfg = self.config(turn.group_id)
        if not cfg.enabled:
            return ReminderReply(REPLY_DISABLED, "refused", "disabled")
        if request.kind == "list":
            return await self._list(turn)
        if request.kind == "cancel":
            return await self._cancel(turn, request.cancel)
        what = request.what
        if request.kind == "model":
            request = await self._model(turn, request)
        if request.kind == "ask":
            return ReminderReply(REPLY_BAD_TIME.format(what=what), "ask", request.reason)
        if request.kind == "model":
            return ReminderReply(REPLY_ASK_TIME.format(what=what), "ask", request.reason)
        if request.kind == "past" and request.when is not None:
            return ReminderReply(
                REPLY_PAST.format(when=format_when(request.when)), "ask", "time_past"
            )
        return await self._set(turn, request, cfg, is_admin=is_admin)

    async def _model(self, turn: TurnInput, request: ReminderRequest) -> ReminderRequest:
        if self.model_time is None:
            return request
        now = china_now(self.clock.now())
        found = await self.model_time.read(
            turn.text, now, bot_id=turn.bot_id, group_id=turn.group_id
        )
        if found.when is None:
            return ReminderRequest("model", what=request.what, reason=f"model:{found.reason}")
        return ReminderRequest(
            "once", when=found.when, what=request.what, everyone=request.everyone, reason="model"
        )

    async def _set(
        self, turn: TurnInput, request: ReminderRequest, cfg: ReminderConfig, *, is_admin: bool
    ) -> ReminderReply:
        assert request.when is not None
        now = self.clock.now()
        if request.everyone and turn.is_private:
            return ReminderReply(REPLY_EVERYONE_PRIVATE, "refused", "everyone_private")
        if request.everyone and not is_admin:
            return ReminderReply(REPLY_EVERYONE_ADMIN, "refused", "everyone_not_admin")
        if len(request.what) > cfg.max_text_chars:
            return ReminderReply(
                REPLY_TOO_LONG.format(chars=cfg.max_text_chars), "refused", "too_long"
            )
        if request.when - china_now(now) > timedelta(days=cfg.max_days_ahead):
            return ReminderReply(
                REPLY_TOO_FAR.format(days=cfg.max_days_ahead), "refused", "too_far"
            )
        mine = await self.repository.active_of(turn.group_id, turn.user_id)
        if len(mine) >= cfg.max_active_per_member:
            return ReminderReply(REPLY_TOO_MANY.format(n=len(mine)), "refused", "member_limit")
        repeat = request.repeat
        if repeat is not None:
            if repeat.interval_minutes < cfg.min_repeat_minutes:
                text = REPLY_TOO_OFTEN.format(minutes=cfg.min_repeat_minutes)
                return ReminderReply(text, "refused", "too_often")
            count = await self.repository.count_repeating(turn.group_id)
            if count >= cfg.max_repeating_per_group:
                text = REPLY_TOO_MANY_REPEATING.format(n=count)
                return ReminderReply(text, "refused", "group_repeat_limit")
        reminder = await self.repository.add(
            NewReminder(
                bot_id=turn.bot_id, group_id=turn.group_id, user_id=turn.user_id,
                text=request.what, next_at=request.when.timestamp(), everyone=request.everyone,
                source=turn.text, rule=repeat.rule if repeat is not None else "",
            ),
            now=now,
        )  # fmt: skip
        log.info(
            "group %s: reminder %s set by %s for %s (%s, %s)",
            turn.group_id, reminder.id, turn.user_id, request.when.isoformat(),
            repeat.rule if repeat else "once", request.reason,
        )  # fmt: skip
        whom = "大家" if request.everyone else "你"
        when = format_when(request.when)
        if repeat is not None:
            text = REPLY_SET_REPEAT.format(
                rule=repeat.describe(), whom=whom, what=request.what, when=when
            )
        else:
            text = REPLY_SET.format(when=when, whom=whom, what=request.what)
        return ReminderReply(text, "set", request.reason, reminder)

    async def _list(self, turn: TurnInput) -> ReminderReply:
        mine = await self.repository.active_of(turn.group_id, turn.user_id)
        if not mine:
            return ReminderReply(REPLY_NONE, "list", "empty")
        return ReminderReply("\n".join([REPLY_LIST_HEAD, *_numbered(mine)]), "list", "listed")

    async def _cancel(self, turn: TurnInput, which: str) -> ReminderReply:
        mine = await self.repository.active_of(turn.group_id, turn.user_id)
        if not mine:
            return ReminderReply(REPLY_NONE, "cancel", "empty")
        if which == "" and len(mine) > 1:
            text = REPLY_WHICH.format(n=len(mine), lines="\n".join(_numbered(mine)))
            return ReminderReply(text, "ask", "which")
        if which == "all":
            chosen: Collection[Reminder] = mine
        elif which == "":
            chosen = mine
        else:
            n = int(which)
            if not 1 <= n <= len(mine):
                return ReminderReply(REPLY_NO_SUCH.format(n=n), "ask", "no_such")
            chosen = [mine[n - 1]]
        gone = await self.repository.cancel(
            [r.id for r in chosen],
            group_id=turn.group_id,
            user_id=turn.user_id,
            now=self.clock.now(),
            by=turn.user_id,
        )
        if which == "all":
            return ReminderReply(REPLY_CANCELLED_ALL.format(n=gone), "cancel", "all")
        what = next(iter(chosen)).text or "这个"
        return ReminderReply(REPLY_CANCELLED.format(what=what), "cancel", "one")


def _numbered(reminders: Iterable[Reminder]) -> list[str]:
    return [f"{n}. {describe(r)}" for n, r in enumerate(reminders, start=1)]
