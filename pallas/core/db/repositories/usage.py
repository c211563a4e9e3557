"""The usage ledger: LLM calls and tokens per day × bot × group × task × model."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from pallas.core.clock import CHINA, local_day
from pallas.core.db.engine import dialect_name
from pallas.core.db.models import UsageLedgerRow

__all__ = ["CHINA", "DailyUsage", "UsageRepository", "UsageTotals", "ledger_day", "usage_by_day"]


def ledger_day(now: float) -> str:
    """Ledger rows (and daily budgets) roll over at midnight in China."""
    return local_day(now)


@dataclass(frozen=True, slots=True)
class UsageTotals:
    calls: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class UsageRepository:
    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self._sessions = sessions

    async def record(
        self,
        *,
        now: float,
        bot_id: int,
        group_id: int,
        task: str,
        model: str,
        prompt_tokens: int,
        completion_tokens: int,
        failed: bool = False,
    ) -> None:
        values = {
            "day": ledger_day(now),
            "bot_id": bot_id,
            "group_id": group_id,
            "task": task,
            "model": model[:128],
            "calls": 1,
            "failures": int(failed),
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
        }
        async with self._sessions() as session:
            insert = postgresql.insert if dialect_name(session) == "postgresql" else sqlite.insert
            stmt = insert(UsageLedgerRow).values(values)
            table = UsageLedgerRow.__table__.c
            stmt = stmt.on_conflict_do_update(
                index_elements=["day", "bot_id", "group_id", "task", "model"],
                set_={
                    "calls": table.calls + 1,
                    "failures": table.failures + int(failed),
                    "prompt_tokens": table.prompt_tokens + prompt_tokens,
                    "completion_tokens": table.completion_tokens + completion_tokens,
                },
            )
            await session.execute(stmt)
            await session.commit()

    async def totals(
        self,
        *,
        now: float,
        bot_id: int | None = None,
        group_id: int | None = None,
        task: str | None = None,
    ) -> UsageTotals:
        """Today's totals, optionally narrowed to a bot / group / task."""
        stmt = select(
            func.coalesce(func.sum(UsageLedgerRow.calls), 0),
            func.coalesce(func.sum(UsageLedgerRow.failures), 0),
            func.coalesce(func.sum(UsageLedgerRow.prompt_tokens), 0),
            func.coalesce(func.sum(UsageLedgerRow.completion_tokens), 0),
        ).where(UsageLedgerRow.day == ledger_day(now))
        if bot_id is not None:
            stmt = stmt.where(UsageLedgerRow.bot_id == bot_id)
        if group_id is not None:
            stmt = stmt.where(UsageLedgerRow.group_id == group_id)
        if task is not None:
            stmt = stmt.where(UsageLedgerRow.task == task)
        async with self._sessions() as session:
            row = (await session.execute(stmt)).one()
        return UsageTotals(*(int(v) for v in row))


@dataclass(frozen=True, slots=True)
class DailyUsage:
    day: str
    bot_id: int
    group_id: int
    task: str
    totals: UsageTotals


async def usage_by_day(
    sessions: async_sessionmaker[AsyncSession],
    days: list[str],
    *,
    group_id: int | None = None,
) -> list[DailyUsage]:
    """Ledger sums per day × bot × group × task over `days` (the `pallas usage` CLI)."""
    t = UsageLedgerRow
    stmt = (
        select(
            t.day,
            t.bot_id,
            t.group_id,
            t.task,
            func.sum(t.calls),
            func.sum(t.failures),
            func.sum(t.prompt_tokens),
            func.sum(t.completion_tokens),
        )
        .where(t.day.in_(days))
        .group_by(t.day, t.bot_id, t.group_id, t.task)
        .order_by(t.day, t.group_id, t.task)
    )
    if group_id is not None:
        stmt = stmt.where(t.group_id == group_id)
    async with sessions() as session:
        rows = (await session.execute(stmt)).all()
    return [
        DailyUsage(day, int(bot), int(group), task, UsageTotals(*(int(v or 0) for v in sums)))
        for day, bot, group, task, *sums in rows
    ]
