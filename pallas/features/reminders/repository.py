"""The reminders (`reminder` table, branch ``reminders``).

A firing is claimed with one conditional update — `status` pending → firing, for the `next_at`
the poller read — so of several processes polling one database exactly one wins each firing
(`claim`). The winner then `finish`es it: done, the next `next_at` of a repeating one, missed
or failed. A claim left behind by a process that died mid-send is never re-sent (it may have
gone out): `expire_claims` marks it failed for the operators.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import Table, bindparam, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from pallas.core.db.engine import rowcount
from pallas.core.db.models_reminders import ReminderRow

PENDING, FIRING, DONE, CANCELLED, MISSED, FAILED = (
    "pending", "firing", "done", "cancelled", "missed", "failed",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Reminder:
    id: int
    bot_id: int
    group_id: int  # 0: set in a private chat
    user_id: int
    everyone: bool
    text: str
    source: str
    rule: str  # "" once
    next_at: float
    status: str
    created_at: float
    fired_at: float | None
    fire_count: int
    note: str

    @property
    def repeating(self) -> bool:
        return bool(self.rule)


@dataclass(frozen=True, slots=True)
class DueKey:
    """What the poll needs of a due reminder to decide who fires it (no full row)."""

    id: int
    bot_id: int
    group_id: int


@dataclass(frozen=True, slots=True)
class Finish:
    """How one claimed firing ended: its new status (pending again with `next_at` for a
    repeating one), whether it was sent, a note for the operators."""

    reminder_id: int
    token: str
    status: str
    now: float
    fired: bool
    next_at: float | None = None
    note: str = ""


@dataclass(frozen=True, slots=True)
class NewReminder:
    bot_id: int
    group_id: int
    user_id: int
    text: str
    next_at: float
    everyone: bool = False
    source: str = ""
    rule: str = ""


def _to_reminder(row: ReminderRow) -> Reminder:
    return Reminder(
        row.id, row.bot_id, row.group_id, row.user_id, row.everyone, row.text, row.source,
        row.rule, row.next_at, row.status, row.created_at, row.fired_at, row.fire_count, row.note,
    )  # fmt: skip


_COLUMNS = (
    ReminderRow.id,
    ReminderRow.bot_id,
    ReminderRow.group_id,
    ReminderRow.user_id,
    ReminderRow.everyone,
    ReminderRow.text,
    ReminderRow.source,
    ReminderRow.rule,
    ReminderRow.next_at,
    ReminderRow.status,
    ReminderRow.created_at,
    ReminderRow.fired_at,
    ReminderRow.fire_count,
    ReminderRow.note,
)  # fmt: skip  (the order of `Reminder`'s fields)


def _from_columns(row: Sequence[Any]) -> Reminder:
    (rid, bot_id, group_id, user_id, everyone, text, source, rule, next_at, status, created_at,
     fired_at, fire_count, note) = row  # fmt: skip
    return Reminder(
        int(rid), int(bot_id), int(group_id), int(user_id), bool(everyone), str(text),
        str(source), str(rule), float(next_at), str(status), float(created_at),
        None if fired_at is None else float(fired_at), int(fire_count), str(note),
    )  # fmt: skip


class ReminderRepository:
    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self._sessions = sessions

    async def add(self, new: NewReminder, *, now: float) -> Reminder:
        row = ReminderRow(
            bot_id=new.bot_id, group_id=new.group_id, user_id=new.user_id,
            everyone=new.everyone, text=new.text, source=new.source[:500], rule=new.rule,
            next_at=new.next_at, status=PENDING, created_at=now, fired_at=None, fire_count=0,
            claim="", claimed_at=None, note="",
        )  # fmt: skip
        async with self._sessions() as session:
            session.add(row)
            await session.commit()
            await session.refresh(row)
            return _to_reminder(row)

    async def add_many(self, new: Collection[NewReminder], *, now: float) -> int:
        """Bulk insert (benchmarks, imports)."""
        rows = [
            ReminderRow(
                bot_id=n.bot_id,
                group_id=n.group_id,
                user_id=n.user_id,
                everyone=n.everyone,
                text=n.text,
                source=n.source[:500],
                rule=n.rule,
                next_at=n.next_at,
                status=PENDING,
                created_at=now,
                fired_at=None,
                fire_count=0,
                claim="",
                claimed_at=None,
                note="",
            )
            for n in new
        ]
        async with self._sessions() as session:
            session.add_all(rows)
            await session.commit()
        return len(rows)

    async def get(self, reminder_id: int) -> Reminder | None:
        async with self._sessions() as session:
            row = await session.get(ReminderRow, reminder_id)
            return _to_reminder(row) if row is not None else None

    async def active_of(self, group_id: int, user_id: int) -> list[Reminder]:
        """A member's pending reminders here (a private chat: group 0), soonest first."""
        stmt = (
            select(ReminderRow)
            .where(
                ReminderRow.group_id == group_id,
                ReminderRow.user_id == user_id,
                ReminderRow.status.in_((PENDING, FIRING)),
            )
            .order_by(ReminderRow.next_at, ReminderRow.id)
        )
        async with self._sessions() as session:
            return [_to_reminder(r) for r in (await session.scalars(stmt)).all()]

    async def count_repeating(self, group_id: int) -> int:
        stmt = select(func.count(ReminderRow.id)).where(
            ReminderRow.group_id == group_id,
            ReminderRow.status.in_((PENDING, FIRING)),
            ReminderRow.rule != "",
        )
        async with self._sessions() as session:
            return int(await session.scalar(stmt) or 0)

    async def for_group(
        self, group_id: int, *, statuses: Collection[str] = (PENDING, FIRING), limit: int = 50
    ) -> list[Reminder]:
        """A group's reminders in these states: pending ones soonest first, others newest."""
        order = (
            (ReminderRow.next_at, ReminderRow.id)
            if set(statuses) <= {PENDING, FIRING}
            else (ReminderRow.claimed_at.desc(), ReminderRow.id.desc())  # when it ended
        )
        stmt = (
            select(ReminderRow)
            .where(ReminderRow.group_id == group_id, ReminderRow.status.in_(tuple(statuses)))
            .order_by(*order)
            .limit(limit)
        )
        async with self._sessions() as session:
            return [_to_reminder(r) for r in (await session.scalars(stmt)).all()]

    async def unsent(self, *, group_id: int | None = None, limit: int = 20) -> list[Reminder]:
        """Reminders that did not go out (missed while the bot was down, or failed on every
        account), newest first, of one group or all (the console's errors page)."""
        stmt = select(ReminderRow).where(ReminderRow.status.in_((MISSED, FAILED)))
        if group_id is not None:
            stmt = stmt.where(ReminderRow.group_id == group_id)
        stmt = stmt.order_by(ReminderRow.claimed_at.desc(), ReminderRow.id.desc()).limit(limit)
        async with self._sessions() as session:
            return [_to_reminder(r) for r in (await session.scalars(stmt)).all()]

    async def cancel(
        self, ids: Collection[int], *, group_id: int, user_id: int | None, now: float, by: int
    ) -> int:
        """Cancel pending reminders of this group (and, for a member, their own only)."""
        if not ids:
            return 0
        stmt = update(ReminderRow).where(
            ReminderRow.id.in_(tuple(ids)),
            ReminderRow.group_id == group_id,
            ReminderRow.status == PENDING,
        )
        if user_id is not None:
            stmt = stmt.where(ReminderRow.user_id == user_id)
        stmt = stmt.values(status=CANCELLED, note=f"cancelled by {by}", claimed_at=now)
        async with self._sessions() as session:
            result = await session.execute(stmt)
            await session.commit()
        return rowcount(result)

    async def due(self, now: float, *, limit: int = 500) -> list[Reminder]:
        stmt = (
            select(ReminderRow)
            .where(ReminderRow.status == PENDING, ReminderRow.next_at <= now)
            .order_by(ReminderRow.next_at, ReminderRow.id)
            .limit(limit)
        )
        async with self._sessions() as session:
            return [_to_reminder(r) for r in (await session.scalars(stmt)).all()]

    async def due_keys(self, now: float, *, limit: int = 2_000) -> list[DueKey]:
        """The due pending reminders' keys, soonest first (columns only: a spike of thousands
        is read without building ORM objects on the event loop)."""
        stmt = (
            select(ReminderRow.id, ReminderRow.bot_id, ReminderRow.group_id)
            .where(ReminderRow.status == PENDING, ReminderRow.next_at <= now)
            .order_by(ReminderRow.next_at, ReminderRow.id)
            .limit(limit)
        )
        async with self._sessions() as session:
            rows = (await session.execute(stmt)).all()
        return [DueKey(int(r[0]), int(r[1]), int(r[2])) for r in rows]

    async def next_due_at(self) -> float | None:
        stmt = select(func.min(ReminderRow.next_at)).where(ReminderRow.status == PENDING)
        async with self._sessions() as session:
            value = await session.scalar(stmt)
        return float(value) if value is not None else None

    async def claim(self, reminder: Reminder, *, token: str, now: float) -> bool:
        """Take this firing (pending at `reminder.next_at`) for `token`; False when another
        process took it, or it was cancelled, since it was read."""
        stmt = (
            update(ReminderRow)
            .where(
                ReminderRow.id == reminder.id,
                ReminderRow.status == PENDING,
                ReminderRow.next_at == reminder.next_at,
            )
            .values(status=FIRING, claim=token, claimed_at=now)
        )
        async with self._sessions() as session:
            result = await session.execute(stmt)
            await session.commit()
        return rowcount(result) == 1

    async def claim_many(self, ids: Collection[int], *, token: str, now: float) -> list[Reminder]:
        """Claim many due firings at once (one update, one read): the ones `token` won. A row
        is taken only while pending and due, so a repeating one another process fired and
        moved on is not taken early."""
        if not ids:
            return []
        stmt = (
            update(ReminderRow)
            .where(
                ReminderRow.id.in_(tuple(ids)),
                ReminderRow.status == PENDING,
                ReminderRow.next_at <= now,
            )
            .values(status=FIRING, claim=token, claimed_at=now)
        )
        read = (
            select(*_COLUMNS)
            .where(
                ReminderRow.id.in_(tuple(ids)),
                ReminderRow.status == FIRING,
                ReminderRow.claim == token,
            )
            .order_by(ReminderRow.next_at, ReminderRow.id)
        )
        async with self._sessions() as session:
            await session.execute(stmt)
            await session.commit()
            return [_from_columns(row) for row in (await session.execute(read)).all()]

    async def finish(
        self,
        reminder_id: int,
        *,
        token: str,
        status: str,
        now: float,
        fired: bool,
        next_at: float | None = None,
        note: str = "",
    ) -> bool:
        done = await self.finish_many(
            [Finish(reminder_id, token, status, now, fired, next_at, note)]
        )
        return done == 1

    async def finish_many(self, finishes: Sequence[Finish]) -> int:
        """End claimed firings (each only while still claimed by its token) in one
        transaction, one executemany per shape of update; the rows ended, as the driver
        reports them."""
        if not finishes:
            return 0
        table = cast(Table, ReminderRow.__table__)
        shapes: dict[tuple[bool, bool], list[dict[str, object]]] = {}
        for f in finishes:
            shapes.setdefault((f.fired, f.next_at is not None), []).append(
                {
                    "b_id": f.reminder_id,
                    "b_token": f.token,
                    "b_status": f.status,
                    "b_note": f.note[:200],
                    "b_now": f.now,
                    "b_next": f.next_at,
                }
            )
        done = 0
        async with self._sessions() as session:
            for (fired, moves), params in shapes.items():
                values: dict[str, Any] = {
                    "status": bindparam("b_status"), "note": bindparam("b_note"), "claim": "",
                }  # fmt: skip
                if fired:
                    values["fired_at"] = bindparam("b_now")
                    values["fire_count"] = table.c.fire_count + 1
                if moves:
                    values["next_at"] = bindparam("b_next")
                stmt = (
                    update(table)
                    .where(
                        table.c.id == bindparam("b_id"),
                        table.c.status == FIRING,
                        table.c.claim == bindparam("b_token"),
                    )
                    .values(**values)
                )
                done += rowcount(await session.execute(stmt, params))
            await session.commit()
        return done

    async def expire_claims(self, before: float) -> int:
        """Claims older than `before` (their process died mid-send): failed, never re-sent."""
        stmt = (
            update(ReminderRow)
            .where(ReminderRow.status == FIRING, ReminderRow.claimed_at < before)
            .values(status=FAILED, note="interrupted while firing", claim="")
        )
        async with self._sessions() as session:
            result = await session.execute(stmt)
            await session.commit()
        return rowcount(result)
