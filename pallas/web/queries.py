"""Read-only aggregate queries for the console, each one an index range scan.

- groups seen: a skip scan over `ix_message_scope_time` (one index seek per (bot, group));
- today's messages / bot messages per group: `ix_message_time_scope` (covering, today only);
- usage: `usage_ledger` rows are already per day × bot × group × task × model.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import case, func, select, tuple_
from sqlalchemy.ext.asyncio import async_sessionmaker

from pallas.core.clock import CHINA_UTC_OFFSET_HOURS, local_day
from pallas.core.db.models import MessageRow, UsageLedgerRow

MAX_GROUPS = 5000


@dataclass(frozen=True, slots=True)
class MessageCounts:
    messages: int = 0
    bot_messages: int = 0


@dataclass(frozen=True, slots=True)
class UsageRow:
    day: str
    bot_id: int
    group_id: int
    task: str
    model: str
    calls: int
    prompt_tokens: int
    completion_tokens: int

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


def day_start(now: float) -> float:
    """Unix seconds of the last midnight in China (when the ledger day rolled over)."""
    local = datetime.fromtimestamp(now, UTC) + timedelta(hours=CHINA_UTC_OFFSET_HOURS)
    midnight = local.replace(hour=0, minute=0, second=0, microsecond=0)
    return (midnight - timedelta(hours=CHINA_UTC_OFFSET_HOURS)).timestamp()


class ConsoleQueries:
    def __init__(self, sessions: async_sessionmaker) -> None:
        self._sessions = sessions

    async def scopes_seen(self) -> list[tuple[int, int]]:
        """Every (bot, group) with stored messages: one index seek per pair."""
        key = tuple_(MessageRow.self_id, MessageRow.group_id)
        found: list[tuple[int, int]] = []
        async with self._sessions() as session:
            last: tuple[int, int] | None = None
            while len(found) < MAX_GROUPS:
                stmt = select(MessageRow.self_id, MessageRow.group_id)
                if last is not None:
                    stmt = stmt.where(key > tuple_(*last))
                stmt = stmt.order_by(MessageRow.self_id, MessageRow.group_id).limit(1)
                row = (await session.execute(stmt)).first()
                if row is None:
                    break
                last = (int(row[0]), int(row[1]))
                found.append(last)
        return found

    async def messages_today(self, now: float) -> dict[tuple[int, int], MessageCounts]:
        stmt = (
            select(
                MessageRow.self_id,
                MessageRow.group_id,
                func.count(),
                func.sum(case((MessageRow.is_bot, 1), else_=0)),
            )
            .where(MessageRow.time >= day_start(now))
            .group_by(MessageRow.self_id, MessageRow.group_id)
        )
        async with self._sessions() as session:
            rows = (await session.execute(stmt)).all()
        return {(int(b), int(g)): MessageCounts(int(n), int(r or 0)) for b, g, n, r in rows}

    async def usage(self, *, since_day: str, group_id: int | None = None) -> list[UsageRow]:
        stmt = select(
            UsageLedgerRow.day,
            UsageLedgerRow.bot_id,
            UsageLedgerRow.group_id,
            UsageLedgerRow.task,
            UsageLedgerRow.model,
            UsageLedgerRow.calls,
            UsageLedgerRow.prompt_tokens,
            UsageLedgerRow.completion_tokens,
        ).where(UsageLedgerRow.day >= since_day)
        if group_id is not None:
            stmt = stmt.where(UsageLedgerRow.group_id == group_id)
        stmt = stmt.order_by(UsageLedgerRow.day)
        async with self._sessions() as session:
            rows = (await session.execute(stmt)).all()
        return [
            UsageRow(str(r[0]), *(int(v) for v in r[1:3]), r[3], r[4], *map(int, r[5:]))
            for r in rows
        ]


def days_back(now: float, days: int) -> str:
    return local_day(now - days * 86400)
