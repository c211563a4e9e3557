"""Where the group-insight sweep resumes: per-group cursors, the round-robin position, and
the reads of the `message` table the sweep needs (row counts and history before a cursor)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from pallas.core.db.engine import dialect_name
from pallas.core.db.models import MessageRow
from pallas.core.db.models_learning import DEFAULT_SCENE, LearningCursorRow, LearningSweepStateRow
from pallas.core.db.repositories.messages import _to_record, message_scope
from pallas.core.records import StoredMessage

GroupKey = tuple[int, int]
_SWEEP = "group_insight"


@dataclass(frozen=True, slots=True)
class CursorState:
    """Where a group's sweep resumes, and what labelling spent on `budget_day`."""

    bot_id: int
    group_id: int
    scene: str = DEFAULT_SCENE
    last_row_id: int = 0
    budget_day: str = ""
    calls_today: int = 0
    tokens_today: int = 0
    failures_at_cursor: int = 0
    pairs_total: int = 0
    labels_total: int = 0
    last_error: str = ""
    updated_at: float = 0.0

    def spent_on(self, day: str) -> tuple[int, int]:
        """(calls, tokens) spent on `day` (zero once the budget day has rolled over)."""
        return (self.calls_today, self.tokens_today) if self.budget_day == day else (0, 0)

    def with_spend(self, day: str, calls: int, tokens: int) -> CursorState:
        used_calls, used_tokens = self.spent_on(day)
        return replace(
            self, budget_day=day, calls_today=used_calls + calls, tokens_today=used_tokens + tokens
        )


def dialect_insert(session: AsyncSession) -> Any:
    return postgresql.insert if dialect_name(session) == "postgresql" else sqlite.insert


def _to_cursor(row: LearningCursorRow) -> CursorState:
    return CursorState(
        bot_id=row.bot_id,
        group_id=row.group_id,
        scene=row.scene,
        last_row_id=row.last_row_id,
        budget_day=row.budget_day,
        calls_today=row.calls_today,
        tokens_today=row.tokens_today,
        failures_at_cursor=row.failures_at_cursor,
        pairs_total=row.pairs_total,
        labels_total=row.labels_total,
        last_error=row.last_error,
        updated_at=row.updated_at,
    )


class LearningCursorRepository:
    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self._sessions = sessions

    # -- cursors and the sweep position --------------------------------------------------------
    async def cursor(
        self, bot_id: int, group_id: int, *, scene: str = DEFAULT_SCENE
    ) -> CursorState:
        stmt = select(LearningCursorRow).where(
            LearningCursorRow.bot_id == bot_id,
            LearningCursorRow.group_id == group_id,
            LearningCursorRow.scene == scene,
        )
        async with self._sessions() as session:
            row = (await session.scalars(stmt)).first()
        return _to_cursor(row) if row is not None else CursorState(bot_id, group_id, scene)

    async def cursors(self) -> dict[GroupKey, CursorState]:
        """Every stored cursor of the default scene, by (bot, group)."""
        stmt = select(LearningCursorRow).where(LearningCursorRow.scene == DEFAULT_SCENE)
        async with self._sessions() as session:
            rows = (await session.scalars(stmt)).all()
        return {(r.bot_id, r.group_id): _to_cursor(r) for r in rows}

    async def collecting_accounts(self, group_id: int) -> list[int]:
        """The accounts that learned any of the group's lines (a cursor past 0)."""
        stmt = select(LearningCursorRow.bot_id).where(
            LearningCursorRow.scene == DEFAULT_SCENE,
            LearningCursorRow.group_id == group_id,
            LearningCursorRow.last_row_id > 0,
        )
        async with self._sessions() as session:
            return [int(b) for b in (await session.scalars(stmt)).all()]

    async def save_cursor(self, state: CursorState) -> None:
        values = {
            "bot_id": state.bot_id,
            "group_id": state.group_id,
            "scene": state.scene,
            "last_row_id": state.last_row_id,
            "budget_day": state.budget_day,
            "calls_today": state.calls_today,
            "tokens_today": state.tokens_today,
            "failures_at_cursor": state.failures_at_cursor,
            "pairs_total": state.pairs_total,
            "labels_total": state.labels_total,
            "last_error": state.last_error[:64],
            "updated_at": state.updated_at,
        }
        await self._upsert(LearningCursorRow, values)

    async def _upsert(self, model: Any, values: dict[str, Any]) -> None:
        index = ["bot_id", "group_id", "scene"]
        async with self._sessions() as session:
            stmt = dialect_insert(session)(model).values(values)
            update = {k: v for k, v in values.items() if k not in index}
            await session.execute(stmt.on_conflict_do_update(index_elements=index, set_=update))
            await session.commit()

    async def sweep_position(self) -> GroupKey | None:
        async with self._sessions() as session:
            row = await session.get(LearningSweepStateRow, _SWEEP)
        if row is None or row.position_bot_id is None or row.position_group_id is None:
            return None
        return (row.position_bot_id, row.position_group_id)

    async def save_sweep_position(self, position: GroupKey | None, *, now: float) -> None:
        async with self._sessions() as session, session.begin():
            row = await session.get(LearningSweepStateRow, _SWEEP)
            if row is None:
                row = LearningSweepStateRow(name=_SWEEP, sweeps=0)
                session.add(row)
            row.position_bot_id = position[0] if position else None
            row.position_group_id = position[1] if position else None
            row.sweeps = (row.sweeps or 0) + 1
            row.updated_at = now

    # -- reads of the message table the sweep needs ----------------------------------------------
    async def count_rows_after(self, bot_id: int, group_id: int, after_row_id: int) -> int:
        stmt = select(func.count()).where(
            *message_scope(bot_id, group_id), MessageRow.id > after_row_id
        )
        async with self._sessions() as session:
            return int((await session.execute(stmt)).scalar_one())

    async def rows_up_to(
        self, bot_id: int, group_id: int, row_id: int, *, limit: int
    ) -> list[StoredMessage]:
        """The `limit` messages at or before a row cursor, oldest first (pair triggers only)."""
        if limit <= 0 or row_id <= 0:
            return []
        stmt = (
            select(MessageRow)
            .where(*message_scope(bot_id, group_id), MessageRow.id <= row_id)
            .order_by(MessageRow.id.desc())
            .limit(limit)
        )
        async with self._sessions() as session:
            rows = (await session.scalars(stmt)).all()
        return [_to_record(r) for r in reversed(rows)]
