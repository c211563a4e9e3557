"""Read-only aggregate queries for the console, each one an index range scan.

- groups seen: a skip scan over `uq_message_scope_id` (one index seek per (bot, group));
- today's messages / bot messages per group: `ix_message_time_scope` (covering, today only);
- usage: `usage_ledger` rows are already per day × bot × group × task × model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import and_, case, func, or_, select, text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from pallas.core.clock import CHINA_UTC_OFFSET_HOURS, DAY_S, local_day
from pallas.core.db.models import InjectionSnapshotRow, MessageRow, UsageLedgerRow
from pallas.core.db.repositories.messages import message_scope

MAX_GROUPS = 5000
USAGE_KEYS = ("day", "bot_id", "group_id", "task", "model", "endpoint")
# Skip scans: min() with an equality prefix is one index seek on (self_id, group_id, …), on
# SQLite and PostgreSQL alike; so the cost is per (bot, group), not per message.
_SKIP_SCAN = text(
    "WITH RECURSIVE bots(b) AS ("
    " SELECT min(self_id) FROM message"
    " UNION ALL"
    " SELECT (SELECT min(m.self_id) FROM message m WHERE m.self_id > bots.b)"
    " FROM bots WHERE bots.b IS NOT NULL"
    "), seen(b, g) AS ("
    " SELECT bots.b, (SELECT min(m.group_id) FROM message m WHERE m.self_id = bots.b)"
    " FROM bots WHERE bots.b IS NOT NULL"
    " UNION ALL"
    " SELECT seen.b,"
    " (SELECT min(m.group_id) FROM message m WHERE m.self_id = seen.b AND m.group_id > seen.g)"
    " FROM seen WHERE seen.g IS NOT NULL"
    ") SELECT b, g FROM seen WHERE g IS NOT NULL ORDER BY b, g LIMIT :limit"
)


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
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    endpoint: str = ""

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


def day_start(now: float) -> float:
    """Unix seconds of the last midnight in China (when the ledger day rolled over)."""
    local = datetime.fromtimestamp(now, UTC) + timedelta(hours=CHINA_UTC_OFFSET_HOURS)
    midnight = local.replace(hour=0, minute=0, second=0, microsecond=0)
    return (midnight - timedelta(hours=CHINA_UTC_OFFSET_HOURS)).timestamp()


def members_today(counts: dict[tuple[int, int], MessageCounts], group_id: int) -> int:
    """Members' lines of a group today, over every account that stored some (each line is
    stored once, by whichever account of the deployment got it first)."""
    return sum(c.messages - c.bot_messages for (_, g), c in counts.items() if g == group_id)


class ConsoleQueries:
    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self._sessions = sessions

    async def scopes_seen(self) -> list[tuple[int, int]]:
        """Every (bot, group) with stored messages: a skip scan in one statement (one index
        seek per pair, whatever the number of messages)."""
        async with self._sessions() as session:
            rows = (await session.execute(_SKIP_SCAN, {"limit": MAX_GROUPS})).all()
        return [(int(b), int(g)) for b, g in rows]

    async def messages_today(self, now: float) -> dict[tuple[int, int], MessageCounts]:
        # Grouping by expressions (`+ 0`) keeps SQLite from walking the whole (self_id,
        # group_id, time) index just to get the groups in order: it range-scans today's part of
        # `ix_message_time_scope` instead, whatever the table's size.
        bot, group = MessageRow.self_id + 0, MessageRow.group_id + 0
        stmt = (
            select(bot, group, func.count(), func.sum(case((MessageRow.is_bot, 1), else_=0)))
            .where(MessageRow.time >= day_start(now))
            .group_by(bot, group)
        )
        async with self._sessions() as session:
            rows = (await session.execute(stmt)).all()
        return {(int(b), int(g)): MessageCounts(int(n), int(r or 0)) for b, g, n, r in rows}

    async def usage(
        self,
        *,
        since_day: str,
        group_id: int | None = None,
        keys: Sequence[str] = USAGE_KEYS,
    ) -> list[UsageRow]:
        """Ledger totals since `since_day`, grouped by `keys` (a subset of `USAGE_KEYS`; the
        others are blank in the rows). A range scan of the ledger's (day, …) unique index."""
        cols = [getattr(UsageLedgerRow, k) for k in keys]
        stmt = (
            select(
                *cols,
                func.sum(UsageLedgerRow.calls),
                func.sum(UsageLedgerRow.prompt_tokens),
                func.sum(UsageLedgerRow.completion_tokens),
                func.sum(UsageLedgerRow.cached_tokens),
                func.sum(UsageLedgerRow.reasoning_tokens),
            )
            .where(UsageLedgerRow.day >= since_day)
            .group_by(*cols)
        )
        if group_id is not None:
            stmt = stmt.where(UsageLedgerRow.group_id == group_id)
        async with self._sessions() as session:
            rows = (await session.execute(stmt)).all()
        out = []
        for row in rows:
            values: dict[str, Any] = dict(zip(keys, row[: len(keys)], strict=True))
            calls, prompt, completion, cached, reasoning = (int(v or 0) for v in row[len(keys) :])
            out.append(
                UsageRow(
                    day=str(values.get("day", "")),
                    bot_id=int(values.get("bot_id", 0)),
                    group_id=int(values.get("group_id", 0)),
                    task=str(values.get("task", "")),
                    model=str(values.get("model", "")),
                    calls=calls,
                    prompt_tokens=prompt,
                    completion_tokens=completion,
                    cached_tokens=cached,
                    reasoning_tokens=reasoning,
                    endpoint=str(values.get("endpoint", "")),
                )
            )
        return out

    async def senders(
        self, keys: Sequence[tuple[int, int, int]]
    ) -> dict[tuple[int, int, int], str]:
        """The card (else nickname) of each stored message's sender, by (bot, group, message
        id): one seek of `uq_message_scope_id` per message."""
        m = MessageRow
        found: dict[tuple[int, int, int], str] = {}
        wanted = list(dict.fromkeys(keys))
        for start in range(0, len(wanted), 100):
            chunk = wanted[start : start + 100]
            match = or_(*(and_(m.self_id == b, m.group_id == g, m.message_id == i)
                          for b, g, i in chunk))  # fmt: skip
            stmt = select(m.self_id, m.group_id, m.message_id, m.card, m.nickname).where(match)
            async with self._sessions() as session:
                rows = (await session.execute(stmt)).all()
            for b, g, i, card, nickname in rows:
                found[(int(b), int(g), int(i))] = str(card or nickname or "")
        return found

    async def snapshot_index(
        self, bot_id: int | None, group_id: int, limit: int
    ) -> list[dict[str, Any]]:
        """The newest snapshots of a group without their (large) data: for lists and links."""
        row = InjectionSnapshotRow
        stmt = (
            select(row.turn_id, row.bot_id, row.user_id, row.message_id, row.created_at,
                   row.model, row.outcome)
            .where(row.group_id == group_id)
            .order_by(row.id.desc())
            .limit(limit)
        )  # fmt: skip
        if bot_id is not None:
            stmt = stmt.where(row.bot_id == bot_id)  # then ix_snapshot_scope serves it
        async with self._sessions() as session:
            rows = (await session.execute(stmt)).all()
        names = ("turn_id", "bot_id", "user_id", "message_id", "created_at", "model", "outcome")
        return [dict(zip(names, r, strict=True)) for r in rows]

    async def members_named(
        self, bot_id: int, group_id: int, name: str, *, scan: int = 5000
    ) -> list[tuple[int, str, str]]:
        """(user id, card, nickname) of members whose card or nickname contains `name`, among
        the senders of the group's newest `scan` messages, newest first (a bounded read)."""
        m = MessageRow
        recent = (
            select(m.user_id, m.card, m.nickname)
            .where(*message_scope(bot_id, group_id), m.is_bot.is_(False))
            .order_by(m.id.desc())
            .limit(scan)
            .subquery()
        )
        pattern = "%" + name.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        stmt = select(recent.c.user_id, recent.c.card, recent.c.nickname).where(
            or_(
                recent.c.card.like(pattern, escape="\\"),
                recent.c.nickname.like(pattern, escape="\\"),
            )
        )
        async with self._sessions() as session:
            rows = (await session.execute(stmt)).all()
        seen: dict[int, tuple[int, str, str]] = {}
        for user_id, card, nickname in rows:
            seen.setdefault(int(user_id), (int(user_id), str(card or ""), str(nickname or "")))
        return list(seen.values())


def days_back(now: float, days: int) -> str:
    return local_day(now - days * DAY_S)
