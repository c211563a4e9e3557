"""Firing the reminders: a database poll, a claim, paced sends.

Why a poll of the database and not jobs in the APScheduler the bot already runs: the row is
the promise. A job in APScheduler's memory is lost at a restart and would have to be rebuilt
from the rows anyway; with several processes every one would hold the job and fire it (its
job stores do not claim across processes); and a cancel would have to reach every copy. One
indexed query a second (`status, next_at`) costs nothing, and the claim — one conditional
update, pending → firing while due — is what makes a firing happen once however many
processes poll the same database. A restart needs nothing: the rows are still there, and the
ones that came due while the bot was down are read on the first poll.

Due while down: less than `grace_minutes` late, it is sent with a note that it is late; later
than that, the owner is told it was missed (a repeating one just moves on to its next time).

Accounts: the account that took a reminder fires it. When that account is connected to another
process of the deployment, this process leaves it to that one; when it is offline everywhere,
an account connected here sends it (the first that can: one that is not in the group fails and
the next is tried).

Pacing: one lane per (group, account) — per account for private chats — sends one message at
a time, `pace_s` apart, so a morning spike or a backlog after downtime reaches each group at
a person's pace; at most `LANE_BATCH` firings are claimed per lane per poll, the rest wait in
the database for the next poll.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections import deque
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Protocol

from pallas.core.clock import Clock
from pallas.core.sending import SegmentDict, Target
from pallas.features.reminders.clock_words import CHINA_TZ, format_when
from pallas.features.reminders.config import ReminderConfig
from pallas.features.reminders.repository import (
    DONE,
    FAILED,
    MISSED,
    PENDING,
    Finish,
    Reminder,
    ReminderRepository,
)
from pallas.features.reminders.schedule import Repeat, next_fire

log = logging.getLogger("pallas.reminders")

POLL_S = 1.0
LANE_BATCH = 20  # firings claimed per lane per poll
DUE_BATCH = 2_000  # due rows read per poll
STALE_CLAIM_S = 1_800.0  # a claim this old was left by a process that died mid-send
LATE_NOTE_AFTER_S = 120.0  # later than this, a sent reminder says it is late
FLUSH_S = 0.05  # the lanes' ends are written together, this often (one transaction)
FLUSH_MAX = 500

FIRED = "到时间啦：{text}"
FIRED_EMPTY = "到时间啦，你之前让我这会儿提醒你～"
FIRED_EVERYONE = "【提醒】{text}"
LATE_NOTE = "（我刚才不在线，晚了{minutes}分钟）"
MISSED_NOTICE = "抱歉，本来{when} 要提醒你{text}，那会儿我不在线，错过了"


class ReminderSender(Protocol):
    async def send(self, bot_id: int, target: Target, segments: list[SegmentDict]) -> int | None:
        """Send one message through account `bot_id`; its id, None when it failed."""
        ...


@dataclass(frozen=True, slots=True)
class FireDecision:
    action: Literal["send", "late", "missed"]
    late_s: float
    reason: str


def firing_decision(due: float, now: float, *, grace_s: float) -> FireDecision:
    """How a firing read at `now` goes out (pure)."""
    late = max(0.0, now - due)
    if late <= LATE_NOTE_AFTER_S:
        return FireDecision("send", late, "on_time")
    if late <= grace_s:
        return FireDecision("late", late, "within_grace")
    return FireDecision("missed", late, "beyond_grace")


def pick_accounts(
    owner: int, local: Collection[int], deployment: Collection[int]
) -> tuple[int, ...]:
    """Which accounts of this process may fire a reminder taken by `owner` (in order); ()
    when none here should: the owner is served by another process, or none is connected."""
    if owner in local:
        return (owner, *sorted(a for a in local if a != owner))
    if owner in deployment:
        return ()
    return tuple(sorted(local))


def fired_message(
    reminder: Reminder, decision: FireDecision, phrase: str | None = None
) -> list[dict[str, Any]]:
    """The segments a firing sends: @owner + the text as written (plain text, no model), or
    the persona's phrasing of it when one was made."""
    if reminder.everyone:
        body = FIRED_EVERYONE.format(text=reminder.text)
    elif phrase:
        body = phrase
    elif reminder.text:
        body = FIRED.format(text=reminder.text)
    else:
        body = FIRED_EMPTY
    if decision.action == "late":
        body += LATE_NOTE.format(minutes=max(1, round(decision.late_s / 60)))
    segments: list[dict[str, Any]] = []
    if not reminder.everyone and reminder.group_id:
        segments.append({"type": "at", "data": {"qq": str(reminder.user_id)}})
        body = " " + body
    segments.append({"type": "text", "data": {"text": body}})
    return segments


def missed_notice(reminder: Reminder) -> str:
    when = format_when(datetime.fromtimestamp(reminder.next_at, CHINA_TZ))
    return MISSED_NOTICE.format(when=when, text=reminder.text or "")


Observer = Callable[[Reminder, float, str], None]  # (reminder, now, outcome)
Phraser = Callable[[Reminder], Awaitable[str | None]]  # an optional persona phrasing


class ReminderFirer:
    def __init__(
        self,
        repository: ReminderRepository,
        *,
        clock: Clock,
        config: Callable[[int], ReminderConfig],
        sender: ReminderSender,
        local_ids: Callable[[], Collection[int]],
        deployment_ids: Callable[[], Collection[int]],
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        poll_s: float = POLL_S,
        observer: Observer | None = None,
        phraser: Phraser | None = None,
    ) -> None:
        self.repository = repository
        self.clock = clock
        self.config = config
        self.sender = sender
        self.local_ids = local_ids
        self.deployment_ids = deployment_ids
        self.sleep = sleep
        self.poll_s = poll_s
        self.observer = observer
        self.phraser = phraser
        self.token = uuid.uuid4().hex[:16]  # this process's claims
        self._lanes: dict[tuple[int, int], deque[tuple[Reminder, tuple[int, ...], str]]] = {}
        self._batches = 0
        self._lane_tasks: dict[tuple[int, int], asyncio.Task[None]] = {}
        self._last_sent: dict[tuple[int, int], float] = {}
        self._queued: set[int] = set()
        self._task: asyncio.Task[None] | None = None
        self._last_expiry = 0.0
        self._finishes: list[tuple[Finish, asyncio.Future[None]]] = []
        self._flusher: asyncio.Task[None] | None = None

    # ------------------------------------------------------------------ the poll

    async def tick(self) -> int:
        """One poll: claim what is due for this process and hand it to the lanes."""
        now = self.clock.now()
        if now - self._last_expiry >= 60.0:
            self._last_expiry = now
            expired = await self.repository.expire_claims(now - STALE_CLAIM_S)
            if expired:
                log.warning(
                    "%d reminder firings were interrupted (a process died mid-send)", expired
                )
        due = await self.repository.due_keys(now, limit=DUE_BATCH)
        local, deployment = self.local_ids(), self.deployment_ids()
        wanted: dict[int, tuple[int, ...]] = {}
        per_lane: dict[tuple[int, int], int] = {}
        for key in due:
            if key.id in self._queued:
                continue
            accounts = pick_accounts(key.bot_id, local, deployment)
            if not accounts:
                continue
            lane = (key.group_id, accounts[0])
            queued = len(self._lanes.get(lane, ())) + per_lane.get(lane, 0)
            if queued >= LANE_BATCH:
                continue
            per_lane[lane] = per_lane.get(lane, 0) + 1
            wanted[key.id] = accounts
        if not wanted:
            return 0
        # one token per claim: a row is this batch's only if this very update took it
        self._batches += 1
        batch = f"{self.token}-{self._batches}"
        claimed = await self.repository.claim_many(wanted, token=batch, now=now)
        for reminder in claimed:
            accounts = wanted[reminder.id]
            lane = (reminder.group_id, accounts[0])
            self._queued.add(reminder.id)
            self._lanes.setdefault(lane, deque()).append((reminder, accounts, batch))
            task = self._lane_tasks.get(lane)
            if task is None or task.done():
                self._lane_tasks[lane] = asyncio.create_task(
                    self._run_lane(lane), name=f"reminders-lane-{lane[0]}-{lane[1]}"
                )
        return len(claimed)

    async def drain(self) -> None:
        """Wait until every claimed firing went out (tests, shutdown)."""
        while tasks := [t for t in self._lane_tasks.values() if not t.done()]:
            await asyncio.gather(*tasks, return_exceptions=True)

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="reminders-poll")
            log.info("reminders: polling the database every %ss", self.poll_s)

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        for lane_task in self._lane_tasks.values():
            lane_task.cancel()
        await asyncio.gather(*self._lane_tasks.values(), return_exceptions=True)

    async def _run(self) -> None:
        while True:
            try:
                await self.tick()
            except Exception:
                log.exception("reminders: poll failed")
            await self.sleep(self.poll_s)

    # ------------------------------------------------------------------ the lanes

    async def _run_lane(self, lane: tuple[int, int]) -> None:
        queue = self._lanes[lane]
        while queue:
            reminder, accounts, batch = queue.popleft()
            try:
                pace = self.config(reminder.group_id).pace_s
                wait = self._last_sent.get(lane, float("-inf")) + pace - self.clock.now()
                if wait > 0:
                    await self.sleep(wait)
                await self._fire(reminder, accounts, batch)
                self._last_sent[lane] = self.clock.now()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("reminders: firing %s failed", reminder.id)
            finally:
                self._queued.discard(reminder.id)

    async def _fire(self, reminder: Reminder, accounts: tuple[int, ...], token: str) -> None:
        now = self.clock.now()
        cfg = self.config(reminder.group_id)
        decision = firing_decision(reminder.next_at, now, grace_s=cfg.grace_minutes * 60)
        repeat = Repeat.from_rule(reminder.rule) if reminder.rule else None
        next_at = (
            next_fire(repeat, datetime.fromtimestamp(max(now, reminder.next_at), CHINA_TZ))
            if repeat is not None
            else None
        )
        following = (PENDING, next_at.timestamp()) if next_at is not None else (DONE, None)
        if decision.action == "missed":
            note = f"missed: {round(decision.late_s / 60)} min late"
            if repeat is None:
                sent = await self._deliver(reminder, accounts, notice=missed_notice(reminder))
                note += ", owner told" if sent else ", owner not reachable"
            status, at = (PENDING, following[1]) if repeat is not None else (MISSED, None)
            await self._finish(
                reminder.id, token=token, status=status, now=now, fired=False,
                next_at=at, note=note,
            )  # fmt: skip
            log.info("reminder %s in group %s missed (%s)", reminder.id, reminder.group_id, note)
            self._observe(reminder, self.clock.now(), "missed")
            return
        sent_by = await self._deliver(reminder, accounts, decision=decision)
        if sent_by is None:
            status, at = following if repeat is not None else (FAILED, None)
            await self._finish(
                reminder.id, token=token, status=status, now=now, fired=False,
                next_at=at, note="send failed on every account",
            )  # fmt: skip
            log.warning(
                "reminder %s in group %s could not be sent (accounts %s)",
                reminder.id, reminder.group_id, accounts,
            )  # fmt: skip
            self._observe(reminder, self.clock.now(), "failed")
            return
        note = f"sent by {sent_by}" + (
            f", {round(decision.late_s)} s late" if decision.late_s else ""
        )
        await self._finish(
            reminder.id, token=token, status=following[0], now=now, fired=True,
            next_at=following[1], note=note,
        )  # fmt: skip
        log.info(
            "reminder %s fired in group %s for %s (%s, %.1f s late)",
            reminder.id, reminder.group_id, reminder.user_id, decision.reason, decision.late_s,
        )  # fmt: skip
        self._observe(reminder, self.clock.now(), decision.action)

    async def _deliver(
        self,
        reminder: Reminder,
        accounts: tuple[int, ...],
        *,
        decision: FireDecision | None = None,
        notice: str = "",
    ) -> int | None:
        """Send through the first account that can; the account that sent, or None."""
        phrase = None
        if decision is not None and not notice and self.phraser is not None:
            try:
                phrase = await self.phraser(reminder)
            except Exception:
                log.exception("reminder %s: persona phrasing failed", reminder.id)
        for bot_id in accounts:
            if reminder.group_id == 0:
                text = notice or _plain(fired_message(reminder, decision or _ON_TIME, phrase))
                private = Target.private(reminder.user_id)
                if await self.sender.send(bot_id, private, [_text(text)]) is not None:
                    return bot_id
                continue
            if notice:
                segments: list[SegmentDict] = [
                    {"type": "at", "data": {"qq": str(reminder.user_id)}},
                    {"type": "text", "data": {"text": " " + notice}},
                ]
            else:
                segments = fired_message(reminder, decision or _ON_TIME, phrase)
            group = Target.group(reminder.group_id)
            if await self.sender.send(bot_id, group, segments) is not None:
                return bot_id
        return None

    async def _finish(
        self,
        reminder_id: int,
        *,
        token: str,
        status: str,
        now: float,
        fired: bool,
        next_at: float | None = None,
        note: str = "",
    ) -> None:
        """End a firing: written with the other lanes' ends of the moment in one transaction
        (one write per firing would queue hundreds of transactions at a morning spike)."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._finishes.append(
            (Finish(reminder_id, token, status, now, fired, next_at, note), future)
        )
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush(), name="reminders-finish")
        await future

    async def _flush(self) -> None:
        await asyncio.sleep(FLUSH_S)
        while self._finishes:
            batch, self._finishes = self._finishes[:FLUSH_MAX], self._finishes[FLUSH_MAX:]
            try:
                await self.repository.finish_many([finish for finish, _ in batch])
            except Exception as exc:
                for _, future in batch:
                    if not future.done():
                        future.set_exception(exc)
                continue
            for _, future in batch:
                if not future.done():
                    future.set_result(None)

    def _observe(self, reminder: Reminder, now: float, outcome: str) -> None:
        if self.observer is not None:
            self.observer(reminder, now, outcome)


_ON_TIME = FireDecision("send", 0.0, "on_time")


def _plain(segments: list[dict[str, Any]]) -> str:
    return "".join(str(s["data"].get("text", "")) for s in segments if s["type"] == "text").strip()


def _text(text: str) -> SegmentDict:
    return {"type": "text", "data": {"text": text}}
