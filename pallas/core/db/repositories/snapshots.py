"""Injection snapshots: what each REPLY turn sent to the model, for `pallas context`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from pallas.core.db.models import InjectionSnapshotRow
from pallas.core.db.write_behind import WriteBehind


@dataclass(frozen=True, slots=True)
class InjectionSnapshot:
    turn_id: str
    bot_id: int
    group_id: int
    user_id: int
    message_id: int
    created_at: float
    model: str
    outcome: str
    data: dict[str, Any]


def _to_snapshot(row: InjectionSnapshotRow) -> InjectionSnapshot:
    return InjectionSnapshot(
        turn_id=row.turn_id,
        bot_id=row.bot_id,
        group_id=row.group_id,
        user_id=row.user_id,
        message_id=row.message_id,
        created_at=row.created_at,
        model=row.model,
        outcome=row.outcome,
        data=dict(row.data or {}),
    )


class SnapshotRepository:
    def __init__(
        self, sessions: async_sessionmaker[AsyncSession], *, keep_per_group: int = 200
    ) -> None:
        self._sessions = sessions
        self._keep = keep_per_group
        self._behind: WriteBehind[InjectionSnapshot] = WriteBehind(
            self._save_many, name="snapshots"
        )

    async def save(self, snapshot: InjectionSnapshot) -> None:
        await self.flush()
        await self._save_many([snapshot])

    def save_later(self, snapshot: InjectionSnapshot) -> None:
        """Queue the snapshot (stored in a batch shortly after; readers here flush first)."""
        self._behind.add(snapshot)

    async def flush(self) -> None:
        await self._behind.flush()

    async def _save_many(self, snapshots: list[InjectionSnapshot]) -> None:
        async with self._sessions() as session, session.begin():
            session.add_all(
                InjectionSnapshotRow(
                    turn_id=snapshot.turn_id,
                    bot_id=snapshot.bot_id,
                    group_id=snapshot.group_id,
                    user_id=snapshot.user_id,
                    message_id=snapshot.message_id,
                    created_at=snapshot.created_at,
                    model=snapshot.model[:128],
                    outcome=snapshot.outcome[:32],
                    data=snapshot.data,
                )
                for snapshot in snapshots
            )
            await session.flush()
            for bot_id, group_id in dict.fromkeys((s.bot_id, s.group_id) for s in snapshots):
                await self._prune(session, bot_id, group_id)

    async def _prune(self, session: AsyncSession, bot_id: int, group_id: int) -> None:
        """Keep the newest `keep_per_group` snapshots of this group."""
        cutoff = (
            select(InjectionSnapshotRow.id)
            .where(InjectionSnapshotRow.bot_id == bot_id, InjectionSnapshotRow.group_id == group_id)
            .order_by(InjectionSnapshotRow.id.desc())
            .offset(self._keep)
            .limit(1)
        )
        old = (await session.execute(cutoff)).scalar_one_or_none()
        if old is not None:
            await session.execute(
                delete(InjectionSnapshotRow).where(
                    InjectionSnapshotRow.bot_id == bot_id,
                    InjectionSnapshotRow.group_id == group_id,
                    InjectionSnapshotRow.id <= old,
                )
            )

    async def latest(
        self, group_id: int, *, bot_id: int | None = None, limit: int = 1
    ) -> list[InjectionSnapshot]:
        stmt = select(InjectionSnapshotRow).where(InjectionSnapshotRow.group_id == group_id)
        if bot_id is not None:
            stmt = stmt.where(InjectionSnapshotRow.bot_id == bot_id)
        stmt = stmt.order_by(InjectionSnapshotRow.id.desc()).limit(limit)
        await self.flush()
        async with self._sessions() as session:
            return [_to_snapshot(r) for r in (await session.scalars(stmt)).all()]

    async def by_turn(self, turn_id: str) -> InjectionSnapshot | None:
        stmt = select(InjectionSnapshotRow).where(InjectionSnapshotRow.turn_id == turn_id)
        await self.flush()
        async with self._sessions() as session:
            row = (await session.scalars(stmt)).first()
        return _to_snapshot(row) if row else None

    async def by_bot_message(
        self, bot_id: int, group_id: int, message_id: int
    ) -> InjectionSnapshot | None:
        """The snapshot of the turn that produced a given bot message (for feedback blame)."""
        stmt = (
            select(InjectionSnapshotRow)
            .where(InjectionSnapshotRow.bot_id == bot_id, InjectionSnapshotRow.group_id == group_id)
            .order_by(InjectionSnapshotRow.id.desc())
            .limit(self._keep)
        )
        await self.flush()
        async with self._sessions() as session:
            for row in (await session.scalars(stmt)).all():
                if message_id in (row.data or {}).get("sent_message_ids", []):
                    return _to_snapshot(row)
        return None
