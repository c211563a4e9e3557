"""The message writer's inserts as one Core `executemany` per batch.

`MessageRepository.add_many` builds a multi-row `INSERT … VALUES (…), (…), …` per chunk of 200:
SQLAlchemy compiles a new statement for every chunk (its cache key depends on the row count),
a few milliseconds of pure Python per batch on the writer thread — time in which that thread
holds the GIL the bot's event loop needs. `BatchInsertMessageRepository` sends the same rows as
one cached `INSERT … ON CONFLICT DO NOTHING` statement with a parameter list (the driver's
`executemany`): compiled once per process, the values bound by the driver. Same rows, same
duplicate handling, same transaction per batch.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import cast

from sqlalchemy import Table
from sqlalchemy.dialects import postgresql, sqlite

from pallas.core.db.engine import dialect_name, rowcount
from pallas.core.db.models import MessageRow
from pallas.core.db.repositories.messages import MessageRepository, _row_values
from pallas.core.records import StoredMessage

_TABLE = cast(Table, MessageRow.__table__)
# no conflict target: a duplicate of either unique index is skipped — the same account's id
# (a re-delivered event) or the same line key (another account's copy, `pallas.core.lines`)
_STATEMENTS = {
    "postgresql": postgresql.insert(_TABLE).on_conflict_do_nothing(),
    "sqlite": sqlite.insert(_TABLE).on_conflict_do_nothing(),
}


class BatchInsertMessageRepository(MessageRepository):
    async def add_many(self, messages: Iterable[StoredMessage]) -> int:
        """Insert, ignoring duplicates of (bot, group, message_id) or (group, line key).
        Returns rows inserted (as the driver counts them for an executemany; 0 or more)."""
        messages = list(messages)
        values = [_row_values(m) for m in messages]
        if not values:
            return 0
        async with self._sessions() as session:
            dialect = dialect_name(session)
            stmt = _STATEMENTS["postgresql" if dialect == "postgresql" else "sqlite"]
            connection = await session.connection()
            result = await connection.execute(stmt, values)
            inserted = max(rowcount(result), 0)
            await session.commit()
        self.events.stored(messages)
        return inserted


__all__ = ["BatchInsertMessageRepository"]
