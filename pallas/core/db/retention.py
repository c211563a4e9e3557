"""Pruning old rows in small batches, and the facts an operator needs about the database.

`prune` deletes one kind of row of one (bot, group) older than a cutoff, `batch` rows per
statement (each statement a short transaction, the event loop free between them), at most
`max_rows` per call: a retention run never holds the database or the loop for long. The
indexes make each batch a range read: messages by (self_id, group_id, time), session turns,
snapshots, the session-variable audit log and the routing history by (bot_id, group_id, id)
from the oldest, the usage ledger by day.

`reclaim` gives freed pages back to the file system: SQLite's `incremental_vacuum` (databases
created by this version use `auto_vacuum = INCREMENTAL`; an older file keeps its free pages
for reuse until a one-time `VACUUM`), PostgreSQL's own autovacuum.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Literal

from sqlalchemy import delete, func, select, text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from pallas.core.clock import local_day
from pallas.core.db.engine import dialect_name
from pallas.core.db.models import (
    InjectionSnapshotRow,
    LlmChatMessageRow,
    MessageRow,
    UsageLedgerRow,
)
from pallas.core.db.models_pipeline import SessionVariableEventRow
from pallas.core.db.models_routes import RouteDecisionRow

Kind = Literal["messages", "sessions", "snapshots", "usage", "audit", "routes"]
KINDS: tuple[Kind, ...] = ("messages", "sessions", "snapshots", "usage", "audit", "routes")


def _oldest(kind: Kind, bot_id: int, group_id: int, cutoff: float, batch: int) -> Any:
    """The ids of the next `batch` rows of `kind` older than `cutoff` in one scope."""
    if kind == "messages":
        m = MessageRow
        return (
            select(m.id)
            .where(m.self_id == bot_id, m.group_id == group_id, m.time < cutoff)
            .order_by(m.time)
            .limit(batch)
        )
    if kind == "usage":
        u = UsageLedgerRow
        return (
            select(u.id)
            .where(u.bot_id == bot_id, u.group_id == group_id, u.day < local_day(cutoff))
            .limit(batch)
        )
    t = _TABLES[kind]
    return (
        select(t.id)
        .where(t.bot_id == bot_id, t.group_id == group_id, t.created_at < cutoff)
        .order_by(t.id)
        .limit(batch)
    )


_TABLES: dict[str, Any] = {"messages": MessageRow, "sessions": LlmChatMessageRow,
           "snapshots": InjectionSnapshotRow, "usage": UsageLedgerRow,
           "audit": SessionVariableEventRow, "routes": RouteDecisionRow}  # fmt: skip


async def prune(
    sessions: async_sessionmaker[AsyncSession],
    kind: Kind,
    bot_id: int,
    group_id: int,
    cutoff: float,
    *,
    batch: int = 500,
    max_rows: int = 20_000,
) -> int:
    """Delete rows of `kind` in one scope older than `cutoff` (unix seconds); how many."""
    table = _TABLES[kind]
    deleted = 0
    while deleted < max_rows:
        ids = _oldest(kind, bot_id, group_id, cutoff, min(batch, max_rows - deleted))
        async with sessions() as session:
            # a subquery of ids keeps each statement one short range delete on both backends
            result = await session.execute(delete(table).where(table.id.in_(ids.scalar_subquery())))
            await session.commit()
        count = int(getattr(result, "rowcount", 0) or 0)
        deleted += count
        if count < batch:
            break
        await asyncio.sleep(0)  # the loop between batches
    return deleted


async def reclaim(sessions: async_sessionmaker[AsyncSession], *, pages: int = 4096) -> int:
    """Hand up to `pages` free pages back to the OS (SQLite with incremental auto-vacuum);
    returns how many were handed back (0 on PostgreSQL, whose autovacuum does this)."""
    async with sessions() as session:
        if dialect_name(session) != "sqlite":
            return 0
        before = await _free_pages(session)
        if before == 0:
            return 0
        connection = await session.connection()
        raw = await connection.get_raw_connection()
        # `incremental_vacuum` frees one page per step, and a cursor's execute() takes only the
        # first step of a statement without result columns: executescript runs it to the end
        await raw.driver_connection.executescript(  # type: ignore[union-attr]
            f"PRAGMA incremental_vacuum({int(pages)});"
        )
        return before - await _free_pages(session)


async def _free_pages(session: AsyncSession) -> int:
    return int((await session.execute(text("PRAGMA freelist_count"))).scalar_one())


@dataclass(frozen=True, slots=True)
class DatabaseFacts:
    size_bytes: int | None  # None when it cannot be told
    oldest_message_at: float | None  # None: no messages

    def line_zh(self) -> str:
        size = "未知" if self.size_bytes is None else f"{self.size_bytes / 1_048_576:.1f} MB"
        oldest = "无" if self.oldest_message_at is None else local_day(self.oldest_message_at)
        return f"数据库 {size}，最早保留的消息 {oldest}"


async def database_facts(sessions: async_sessionmaker[AsyncSession]) -> DatabaseFacts:
    async with sessions() as session:
        oldest = (await session.execute(select(func.min(MessageRow.time)))).scalar_one()
        if dialect_name(session) == "sqlite":
            pages = (await session.execute(text("PRAGMA page_count"))).scalar_one()
            size = (await session.execute(text("PRAGMA page_size"))).scalar_one()
            total: int | None = int(pages) * int(size)
        else:
            found = await session.execute(text("SELECT pg_database_size(current_database())"))
            total = int(found.scalar_one())
    return DatabaseFacts(total, float(oldest) if oldest is not None else None)
