"""The usage ledger: LLM calls and tokens per day × bot × group × task × model."""

from __future__ import annotations

from dataclasses import astuple, dataclass
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from pallas.core.clock import CHINA, local_day
from pallas.core.db.engine import dialect_name
from pallas.core.db.models import UsageLedgerRow
from pallas.core.db.write_behind import WriteBehind

__all__ = [
    "CHINA",
    "DailyUsage",
    "UsageEntry",
    "UsageRepository",
    "UsageTotals",
    "add_totals",
    "ledger_day",
    "usage_by_day",
]


def ledger_day(now: float) -> str:
    """Ledger rows (and daily budgets) roll over at midnight in China."""
    return local_day(now)


@dataclass(frozen=True, slots=True)
class UsageTotals:
    calls: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0  # of prompt_tokens, served from the provider's prefix cache
    reasoning_tokens: int = 0  # of completion_tokens, spent thinking

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def cache_share(self) -> float:
        """The share of prompt tokens the provider billed as cache hits (0 without prompts)."""
        return self.cached_tokens / self.prompt_tokens if self.prompt_tokens else 0.0


@dataclass(frozen=True, slots=True)
class UsageEntry:
    """One LLM call for the ledger (summed per day × bot × group × task × model)."""

    now: float
    bot_id: int
    group_id: int
    task: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    failed: bool = False
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    endpoint: str = ""  # which endpoint of the task's chain answered ("primary", a backup)

    def values(self) -> dict[str, Any]:
        return {
            "day": ledger_day(self.now),
            "bot_id": self.bot_id,
            "group_id": self.group_id,
            "task": self.task,
            "model": self.model[:128],
            "endpoint": self.endpoint[:32],
            "calls": 1,
            "failures": int(self.failed),
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cached_tokens": self.cached_tokens,
            "reasoning_tokens": self.reasoning_tokens,
        }


class UsageRepository:
    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self._sessions = sessions
        self._behind: WriteBehind[dict[str, Any]] = WriteBehind(self._record_many, name="usage")

    async def record(self, entry: UsageEntry) -> None:
        """Store one call now (flushing the queued ones first, so totals stay in order)."""
        await self.flush()
        await self._record_many([entry.values()])

    def record_later(self, entry: UsageEntry) -> None:
        """Queue one call for the ledger (stored in a batch shortly after; `totals` flushes)."""
        self._behind.add(entry.values())

    async def flush(self) -> None:
        await self._behind.flush()

    async def _record_many(self, calls: list[dict[str, Any]]) -> None:
        merged: dict[tuple[Any, ...], dict[str, Any]] = {}
        for values in calls:  # one upsert per ledger row, however many calls it sums
            key = tuple(values[k] for k in _LEDGER_KEY)
            if key in merged:
                for column in _COUNTERS:
                    merged[key][column] += values[column]
            else:
                merged[key] = dict(values)
        async with self._sessions() as session:
            insert = postgresql.insert if dialect_name(session) == "postgresql" else sqlite.insert
            table = UsageLedgerRow.__table__.c
            for values in merged.values():
                stmt = insert(UsageLedgerRow).values(values)
                stmt = stmt.on_conflict_do_update(
                    index_elements=list(_LEDGER_KEY),
                    set_={column: table[column] + values[column] for column in _COUNTERS},
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
        stmt = select(*_sums()).where(UsageLedgerRow.day == ledger_day(now))
        if bot_id is not None:
            stmt = stmt.where(UsageLedgerRow.bot_id == bot_id)
        if group_id is not None:
            stmt = stmt.where(UsageLedgerRow.group_id == group_id)
        if task is not None:
            stmt = stmt.where(UsageLedgerRow.task == task)
        await self.flush()
        async with self._sessions() as session:
            row = (await session.execute(stmt)).one()
        return UsageTotals(*(int(v) for v in row))

    async def group_totals(
        self, *, now: float, task: str | None = None
    ) -> dict[tuple[int, int], UsageTotals]:
        """Today's totals of every (bot, group) with a ledger row, in one grouped query."""
        row = UsageLedgerRow
        stmt = (
            select(row.bot_id, row.group_id, *_sums())
            .where(row.day == ledger_day(now))
            .group_by(row.bot_id, row.group_id)
        )
        if task is not None:
            stmt = stmt.where(row.task == task)
        await self.flush()
        async with self._sessions() as session:
            rows = (await session.execute(stmt)).all()
        return {
            (int(bot), int(group)): UsageTotals(*(int(v) for v in sums))
            for bot, group, *sums in rows
        }


_LEDGER_KEY = ("day", "bot_id", "group_id", "task", "model", "endpoint")
_COUNTERS = (
    "calls",
    "failures",
    "prompt_tokens",
    "completion_tokens",
    "cached_tokens",
    "reasoning_tokens",
)


def _sums() -> tuple[Any, ...]:
    """The summed counters, in `UsageTotals` order (0 over no rows)."""
    return tuple(func.coalesce(func.sum(getattr(UsageLedgerRow, c)), 0) for c in _COUNTERS)


@dataclass(frozen=True, slots=True)
class DailyUsage:
    day: str
    bot_id: int
    group_id: int
    task: str
    totals: UsageTotals
    model: str = ""


def add_totals(a: UsageTotals, b: UsageTotals) -> UsageTotals:
    return UsageTotals(*(x + y for x, y in zip(astuple(a), astuple(b), strict=True)))


async def usage_by_day(
    sessions: async_sessionmaker[AsyncSession],
    days: list[str],
    *,
    group_id: int | None = None,
) -> list[DailyUsage]:
    """Ledger sums per day × bot × group × task × model over `days` (the `pallas usage` CLI)."""
    t = UsageLedgerRow
    stmt = (
        select(
            t.day,
            t.bot_id,
            t.group_id,
            t.task,
            t.model,
            *(func.sum(getattr(t, c)) for c in _COUNTERS),
        )
        .where(t.day.in_(days))
        .group_by(t.day, t.bot_id, t.group_id, t.task, t.model)
        .order_by(t.day, t.group_id, t.task)
    )
    if group_id is not None:
        stmt = stmt.where(t.group_id == group_id)
    async with sessions() as session:
        rows = (await session.execute(stmt)).all()
    return [
        DailyUsage(
            day, int(bot), int(group), task, UsageTotals(*(int(v or 0) for v in sums)), model
        )
        for day, bot, group, task, model, *sums in rows
    ]
