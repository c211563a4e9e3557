"""`session_variable` / `session_variable_event`: durable session variables, versioned per turn.

`commit` writes every change of one turn (or admin command) in one transaction and only if no
row moved on since it was read (`expected_version`); on a conflict nothing is written and the
caller re-reads and re-applies its ops. Values are JSON scalars.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from pallas.core.db.engine import rowcount
from pallas.core.db.models_pipeline import SessionVariableEventRow, SessionVariableRow


@dataclass(frozen=True, slots=True)
class StoredVariable:
    member_id: int
    name: str
    value: Any
    version: int
    turn_id: str = ""
    actor: str = ""
    updated_at: float = 0.0


@dataclass(frozen=True, slots=True)
class VariableWrite:
    member_id: int
    name: str
    value: Any
    expected_version: int  # 0 = the row must not exist yet
    op: str = "set"
    operand: str = ""
    old_value: Any = None


@dataclass(frozen=True, slots=True)
class VariableEvent:
    member_id: int
    name: str
    op: str
    operand: str
    old_value: Any
    new_value: Any
    turn_id: str
    actor: str
    created_at: float


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _load(text: str) -> Any:
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return text


def _stored(row: SessionVariableRow) -> StoredVariable:
    return StoredVariable(
        row.member_id,
        row.name,
        _load(row.value),
        row.version,
        row.turn_id,
        row.actor,
        row.updated_at,
    )


class SessionVariableRepository:
    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self._sessions = sessions

    async def load(
        self, bot_id: int, group_id: int, member_ids: Collection[int] | None = None
    ) -> dict[tuple[int, str], StoredVariable]:
        """Rows of the group (member_id 0) and of `member_ids` (None = every member)."""
        stmt = select(SessionVariableRow).where(
            SessionVariableRow.bot_id == bot_id, SessionVariableRow.group_id == group_id
        )
        if member_ids is not None:
            stmt = stmt.where(SessionVariableRow.member_id.in_({0, *member_ids}))
        async with self._sessions() as session:
            rows = (await session.scalars(stmt)).all()
        return {(r.member_id, r.name): _stored(r) for r in rows}

    async def commit(
        self,
        bot_id: int,
        group_id: int,
        writes: Sequence[VariableWrite],
        *,
        turn_id: str,
        actor: str,
        now: float,
    ) -> bool:
        """All `writes` or none: False when another writer got there first."""
        if not writes:
            return True
        async with self._sessions() as session:
            try:
                for write in writes:
                    if not await self._write_one(
                        session, bot_id, group_id, write, turn_id, actor, now
                    ):
                        await session.rollback()
                        return False
                    session.add(self._event(bot_id, group_id, write, turn_id, actor, now))
                await session.commit()
            except IntegrityError:
                await session.rollback()
                return False
        return True

    @staticmethod
    async def _write_one(
        session: AsyncSession,
        bot_id: int,
        group_id: int,
        write: VariableWrite,
        turn_id: str,
        actor: str,
        now: float,
    ) -> bool:
        if write.expected_version == 0:
            session.add(
                SessionVariableRow(
                    bot_id=bot_id,
                    group_id=group_id,
                    member_id=write.member_id,
                    name=write.name,
                    value=_dump(write.value),
                    version=1,
                    turn_id=turn_id,
                    actor=actor,
                    updated_at=now,
                )
            )
            await session.flush()
            return True
        result = await session.execute(
            update(SessionVariableRow)
            .where(
                SessionVariableRow.bot_id == bot_id,
                SessionVariableRow.group_id == group_id,
                SessionVariableRow.member_id == write.member_id,
                SessionVariableRow.name == write.name,
                SessionVariableRow.version == write.expected_version,
            )
            .values(
                value=_dump(write.value),
                version=write.expected_version + 1,
                turn_id=turn_id,
                actor=actor,
                updated_at=now,
            )
        )
        return bool(rowcount(result))

    @staticmethod
    def _event(
        bot_id: int, group_id: int, write: VariableWrite, turn_id: str, actor: str, now: float
    ) -> SessionVariableEventRow:
        return SessionVariableEventRow(
            bot_id=bot_id,
            group_id=group_id,
            member_id=write.member_id,
            name=write.name,
            op=write.op[:16],
            operand=write.operand[:500],
            old_value=_dump(write.old_value),
            new_value=_dump(write.value),
            turn_id=turn_id,
            actor=actor[:64],
            created_at=now,
        )

    async def reset(
        self,
        bot_id: int,
        group_id: int,
        *,
        name: str | None = None,
        member_id: int | None = None,
        turn_id: str,
        actor: str,
        now: float,
    ) -> int:
        """Delete stored values (they fall back to their defaults); logged as `reset`."""
        where = [SessionVariableRow.bot_id == bot_id, SessionVariableRow.group_id == group_id]
        if name is not None:
            where.append(SessionVariableRow.name == name)
        if member_id is not None:
            where.append(SessionVariableRow.member_id == member_id)
        async with self._sessions() as session:
            rows = (await session.scalars(select(SessionVariableRow).where(*where))).all()
            for row in rows:
                write = VariableWrite(
                    row.member_id, row.name, None, row.version, "reset", "", _load(row.value)
                )
                session.add(self._event(bot_id, group_id, write, turn_id, actor, now))
            await session.execute(delete(SessionVariableRow).where(*where))
            await session.commit()
        return len(rows)

    async def events(self, bot_id: int, group_id: int, *, limit: int = 50) -> list[VariableEvent]:
        """Newest first."""
        stmt = (
            select(SessionVariableEventRow)
            .where(
                SessionVariableEventRow.bot_id == bot_id,
                SessionVariableEventRow.group_id == group_id,
            )
            .order_by(SessionVariableEventRow.id.desc())
            .limit(limit)
        )
        async with self._sessions() as session:
            rows = (await session.scalars(stmt)).all()
        return [
            VariableEvent(
                r.member_id,
                r.name,
                r.op,
                r.operand,
                _load(r.old_value),
                _load(r.new_value),
                r.turn_id,
                r.actor,
                r.created_at,
            )
            for r in rows
        ]
