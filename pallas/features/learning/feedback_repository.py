"""Negative-feedback outcomes: an admin's 「不可以」 on a bot line.

One row per bot × group × bot line × admin (the idempotency key); undo sets `undone_at`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from pallas.core.db.engine import dialect_name
from pallas.core.db.models_learning import LearningFeedbackRow
from pallas.core.learning_records import Blame, FeedbackKey, FeedbackOutcome


@dataclass(frozen=True, slots=True)
class StoredFeedback:
    id: int
    outcome: FeedbackOutcome
    turn_id: str


def _blames_json(blames: tuple[Blame, ...]) -> list[dict[str, Any]]:
    return [
        {"kind": b.kind, "source_id": b.source_id, "weight": b.weight, "phrase": b.phrase}
        for b in blames
    ]


def _blames_from(data: Any) -> tuple[Blame, ...]:
    blames = []
    for item in data or ():
        if isinstance(item, dict) and item.get("kind") and item.get("source_id") is not None:
            blames.append(
                Blame(
                    kind=str(item["kind"]),
                    source_id=str(item["source_id"]),
                    weight=float(item.get("weight", 0.0)),
                    phrase=str(item.get("phrase") or ""),
                )
            )
    return tuple(blames)


def _to_stored(row: LearningFeedbackRow) -> StoredFeedback:
    outcome = FeedbackOutcome(
        bot_id=row.bot_id,
        group_id=row.group_id,
        bot_message_id=row.bot_message_id,
        admin_id=row.admin_id,
        created_at=row.created_at,
        word=row.word,
        blames=_blames_from(row.blames),
        bot_text=row.bot_text,
        ignored_sources=tuple(str(s) for s in row.ignored_sources or ()),
        undone_at=row.undone_at,
    )
    return StoredFeedback(row.id, outcome, row.turn_id)


class FeedbackRepository:
    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self._sessions = sessions

    async def save(self, outcome: FeedbackOutcome, *, turn_id: str = "") -> StoredFeedback:
        """Insert, or overwrite the row of the same key (a re-recorded, undone outcome)."""
        values = {
            "bot_id": outcome.bot_id,
            "group_id": outcome.group_id,
            "bot_message_id": outcome.bot_message_id,
            "admin_id": outcome.admin_id,
            "word": outcome.word[:32],
            "bot_text": outcome.bot_text,
            "turn_id": turn_id[:64],
            "blames": _blames_json(outcome.blames),
            "ignored_sources": list(outcome.ignored_sources),
            "created_at": outcome.created_at,
            "undone_at": outcome.undone_at,
        }
        index = ["bot_id", "group_id", "bot_message_id", "admin_id"]
        async with self._sessions() as session:
            dialect = dialect_name(session)
            insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
            stmt = insert(LearningFeedbackRow).values(values)
            update = {k: v for k, v in values.items() if k not in index}
            await session.execute(stmt.on_conflict_do_update(index_elements=index, set_=update))
            await session.commit()
        stored = await self.by_key(outcome.key)
        assert stored is not None
        return stored

    async def by_key(self, key: FeedbackKey) -> StoredFeedback | None:
        bot_id, group_id, message_id, admin_id = key
        stmt = select(LearningFeedbackRow).where(
            LearningFeedbackRow.bot_id == bot_id,
            LearningFeedbackRow.group_id == group_id,
            LearningFeedbackRow.bot_message_id == message_id,
            LearningFeedbackRow.admin_id == admin_id,
        )
        async with self._sessions() as session:
            row = (await session.scalars(stmt)).first()
        return _to_stored(row) if row is not None else None

    async def for_group(
        self,
        bot_id: int,
        group_id: int,
        *,
        since: float | None = None,
        bot_message_id: int | None = None,
        limit: int = 500,
    ) -> list[StoredFeedback]:
        """Outcomes of one bot × group (newest first), optionally for one bot line."""
        stmt = select(LearningFeedbackRow).where(
            LearningFeedbackRow.bot_id == bot_id, LearningFeedbackRow.group_id == group_id
        )
        if since is not None:
            stmt = stmt.where(LearningFeedbackRow.created_at >= since)
        if bot_message_id is not None:
            stmt = stmt.where(LearningFeedbackRow.bot_message_id == bot_message_id)
        stmt = stmt.order_by(LearningFeedbackRow.id.desc()).limit(limit)
        async with self._sessions() as session:
            return [_to_stored(r) for r in (await session.scalars(stmt)).all()]

    async def by_id(self, bot_id: int, group_id: int, feedback_id: int) -> StoredFeedback | None:
        async with self._sessions() as session:
            row = await session.get(LearningFeedbackRow, feedback_id)
        if row is None or (row.bot_id, row.group_id) != (bot_id, group_id):
            return None
        return _to_stored(row)

    async def set_undone(self, feedback_id: int, undone_at: float | None) -> None:
        async with self._sessions() as session, session.begin():
            row = await session.get(LearningFeedbackRow, feedback_id)
            if row is not None:
                row.undone_at = undone_at
