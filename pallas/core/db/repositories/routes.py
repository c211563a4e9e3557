"""The routing history: every decision record of the router, kept across restarts.

The router hands each record (`RouteResult.to_log_dict()`, a record made outside routing, or a
later record of the same message: the cost guard's verdict, `error` when the model call
failed) to `add`, which only queues it: the rows are written behind in batches
(`WriteBehind`), never awaited on the routing path. Readers here flush what they would read
first, so a page shows a decision made a moment ago. Rows older than a group's
`[retention] routes_days` are pruned by the retention job (`pallas.core.db.retention`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, insert, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from pallas.core.db.models_routes import RouteDecisionRow
from pallas.core.db.write_behind import WriteBehind

ERROR = "error"  # the outcome of a turn that failed after routing (the model call, a step)
LINGER_S = 0.25  # a burst of messages shares one insert


@dataclass(frozen=True, slots=True)
class RouteRecord:
    """One stored decision record (`data` is the record as the router made it)."""

    id: int
    bot_id: int
    group_id: int
    user_id: int
    message_id: int
    time: float
    outcome: str
    stage: str
    reason: str
    data: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        """The record as the routing page and `/pallas why` read it, with its row id."""
        return {**self.data, "id": self.id}


def _row_values(record: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "bot_id": int(record.get("bot") or 0),
        "group_id": int(record.get("group") or 0),
        "user_id": int(record.get("user") or 0),
        "message_id": int(record.get("message_id") or 0),
        "created_at": float(record.get("time") or 0.0),
        "outcome": str(record.get("outcome") or "")[:32],
        "stage": str(record.get("stage") or "")[:32],
        "reason": str(record.get("reason") or "")[:128],
        # whatever a later stage added to the record is stored (`default=str`)
        "data": json.dumps(record, default=str),  # ASCII: the text type's fast path
    }


def _data(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _record(row: RouteDecisionRow) -> RouteRecord:
    return RouteRecord(
        id=row.id,
        bot_id=row.bot_id,
        group_id=row.group_id,
        user_id=row.user_id,
        message_id=row.message_id,
        time=row.created_at,
        outcome=row.outcome,
        stage=row.stage,
        reason=row.reason,
        data=_data(row.data),
    )


class RouteHistoryRepository:
    def __init__(
        self, sessions: async_sessionmaker[AsyncSession], *, linger: float = LINGER_S
    ) -> None:
        self._sessions = sessions
        self._behind: WriteBehind[dict[str, Any]] = WriteBehind(
            self._store, name="routes", linger=linger, batch_size=500
        )

    def add(self, record: Mapping[str, Any]) -> None:
        """Queue one decision record (stored in a batch shortly after; made a row there, off
        the routing path)."""
        self._behind.add(dict(record))

    @property
    def queued(self) -> int:
        return self._behind.queued

    async def flush(self) -> None:
        await self._behind.flush()

    async def _store(self, records: list[dict[str, Any]]) -> None:
        rows = [_row_values(record) for record in records]
        async with self._sessions() as session, session.begin():
            await session.execute(insert(RouteDecisionRow), rows)

    async def _flush_group(self, group_id: int | None) -> None:
        if group_id is None:
            await self.flush()
        else:
            await self._behind.flush_matching(lambda record: record.get("group") == group_id)

    async def recent(
        self, bot_id: int, group_id: int, *, limit: int = 50, outcome: str | None = None
    ) -> list[dict[str, Any]]:
        """The group's newest `limit` records (of one outcome), oldest first."""
        r = RouteDecisionRow
        stmt = select(r).where(r.bot_id == bot_id, r.group_id == group_id)
        if outcome:
            stmt = stmt.where(r.outcome == outcome)
        stmt = stmt.order_by(r.id.desc()).limit(limit)
        await self._flush_group(group_id)
        async with self._sessions() as session:
            rows = (await session.scalars(stmt)).all()
        return [_record(row).as_dict() for row in reversed(rows)]

    async def failures(
        self,
        *,
        group_id: int | None = None,
        since: float | None = None,
        before_id: int | None = None,
        limit: int = 100,
    ) -> list[RouteRecord]:
        """Failed turns (outcome `error`), newest first; of one group, since a time, or older
        than a row (the next page)."""
        r = RouteDecisionRow
        stmt = select(r).where(r.outcome == ERROR)
        if group_id is not None:
            stmt = stmt.where(r.group_id == group_id)
        if since is not None:
            stmt = stmt.where(r.created_at >= since)
        if before_id is not None:
            stmt = stmt.where(r.id < before_id)
        stmt = stmt.order_by(r.id.desc()).limit(limit)
        await self._flush_group(group_id)
        async with self._sessions() as session:
            return [_record(row) for row in (await session.scalars(stmt)).all()]

    async def failure_counts(self, since: float) -> dict[tuple[int, int], int]:
        """Failed turns since `since` per (bot, group): a range of the outcome index."""
        r = RouteDecisionRow
        stmt = (
            select(r.bot_id, r.group_id, func.count())
            .where(r.outcome == ERROR, r.created_at >= since)
            .group_by(r.bot_id, r.group_id)
        )
        await self.flush()
        async with self._sessions() as session:
            rows = (await session.execute(stmt)).all()
        return {(int(b), int(g)): int(n) for b, g, n in rows}
