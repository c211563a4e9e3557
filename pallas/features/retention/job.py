"""The retention run: each group's old rows pruned by its `[retention]`, within a budget.

`cutoffs` is the pure decision (which kinds of rows of a group are pruned, up to when);
`RetentionJob.run` applies it group by group, `batch` rows per statement, at most `max_rows`
per run (a busy year's backlog is worked off over several runs instead of in one long one),
then hands freed pages back (`pallas.core.db.retention.reclaim`). The `retention` plugin runs
it every hour; one INFO line says what it removed.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from pallas.core.clock import DAY_S, Clock
from pallas.core.db.retention import KINDS, Kind, prune, reclaim
from pallas.features.retention.config import RetentionConfig

log = logging.getLogger("pallas.retention")


@dataclass(frozen=True, slots=True)
class Cutoff:
    kind: Kind
    before: float  # unix seconds: rows older than this go
    reason: str  # "messages_days=90"


def cutoffs(config: RetentionConfig, now: float) -> tuple[Cutoff, ...]:
    """The kinds of rows a group prunes, and from when (none when every `*_days` is 0)."""
    return tuple(
        Cutoff(kind, now - config.days(kind) * DAY_S, f"{kind}_days={config.days(kind)}")
        for kind in KINDS
        if config.days(kind) > 0
    )


@dataclass
class RetentionReport:
    deleted: dict[str, int] = field(default_factory=dict)  # kind → rows
    groups: int = 0
    budget_spent: bool = False  # stopped at max_rows: the next run goes on
    seconds: float = 0.0
    pages_freed: int = 0  # SQLite pages handed back to the file system

    @property
    def total(self) -> int:
        return sum(self.deleted.values())


@dataclass
class RetentionJob:
    sessions: async_sessionmaker[AsyncSession]
    clock: Clock
    scopes: Callable[[], Awaitable[list[tuple[int, int]]]]  # (bot, group) pairs with messages
    config_of: Callable[[int], RetentionConfig]  # a group's [retention]
    batch: int = 500
    max_rows: int = 50_000

    async def run(self) -> RetentionReport:
        started = time.perf_counter()
        report = RetentionReport()
        now = self.clock.now()
        left = self.max_rows
        for bot_id, group_id in await self.scopes():
            plan = cutoffs(self.config_of(group_id), now)
            if not plan:
                continue
            report.groups += 1
            for cut in plan:
                gone = await prune(self.sessions, cut.kind, bot_id, group_id, cut.before,
                                   batch=self.batch, max_rows=left)  # fmt: skip
                report.deleted[cut.kind] = report.deleted.get(cut.kind, 0) + gone
                left -= gone
                if left <= 0:
                    report.budget_spent = True
                    break
            if report.budget_spent:
                break
        if report.total:
            report.pages_freed = await reclaim(self.sessions)
        report.seconds = time.perf_counter() - started
        if report.total:
            more = "; budget spent, the next run goes on" if report.budget_spent else ""
            log.info("retention removed %s in %d group(s) in %.1f s, %d page(s) freed%s",
                     _kinds(report.deleted), report.groups, report.seconds,
                     report.pages_freed, more)  # fmt: skip
        return report


def _kinds(deleted: Mapping[str, int]) -> str:
    return ", ".join(f"{n} {kind}" for kind, n in deleted.items() if n) or "nothing"
