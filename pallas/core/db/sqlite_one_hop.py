"""SQLite statements in one hop to the connection's thread (the aiosqlite driver, adapted).

aiosqlite runs each SQLite connection on a thread of its own, and every DBAPI call is a round
trip: the event loop queues the call, the thread runs it, the result comes back through the
loop. SQLAlchemy's adapter makes a SELECT four of them (open a cursor, execute, fetch all, close
the cursor) and returning the connection to the pool a fifth (a ROLLBACK, even when nothing was
written). Each round trip takes the GIL twice on each side, so under load (a burst, the loop
busy) one read cost 10-20 ms of waiting; a group's first @ after a restart makes ~12 of them.

`OneHopCursor` runs the whole statement — cursor, execute, fetch, close — as one function on
the connection's thread and keeps what the cursor told (description, rows, rowcount,
lastrowid), and `OneHopConnection` skips the ROLLBACK / COMMIT round trip when the connection
is known to have no open transaction (`sqlite3.Connection.in_transaction`, read on the thread
after each statement; any path this module does not run marks it unknown). Results, errors
and transactions are otherwise SQLAlchemy's own: only how the calls reach the thread changes.

It is installed through `create_async_engine(module=...)` (`one_hop_module()`), for the
SQLAlchemy and aiosqlite versions whose adapter it extends; with others it returns None and the
stock adapter is used. Server-side cursors (streamed results) keep the stock behaviour.
"""

from __future__ import annotations

import collections
import logging
import sqlite3
from collections.abc import Sequence
from threading import Thread
from typing import Any

log = logging.getLogger("pallas.db")

try:
    import aiosqlite
    from sqlalchemy.dialects.sqlite.aiosqlite import (
        AsyncAdapt_aiosqlite_connection,
        AsyncAdapt_aiosqlite_cursor,
        AsyncAdapt_aiosqlite_dbapi,
    )
    from sqlalchemy.util import EMPTY_DICT
    from sqlalchemy.util.concurrency import await_
except ImportError:  # pragma: no cover - an older SQLAlchemy: the stock adapter
    AsyncAdapt_aiosqlite_connection = AsyncAdapt_aiosqlite_cursor = None  # type: ignore[misc,assignment]

# What one statement left behind: description, rows (None: no result set), rowcount,
# lastrowid, and whether a transaction is open afterwards.
_Outcome = tuple[Any, list[Any] | None, int, Any, bool]


def _run(connection: sqlite3.Connection, operation: str, parameters: Any, many: bool) -> _Outcome:
    """On the connection's thread: the statement from cursor to close."""
    cursor = connection.cursor()
    try:
        if many:
            cursor.executemany(operation, parameters)
        elif parameters is None:
            cursor.execute(operation)
        else:
            cursor.execute(operation, parameters)
        description = cursor.description
        rows = cursor.fetchall() if description else None
        return description, rows, cursor.rowcount, cursor.lastrowid, connection.in_transaction
    finally:
        cursor.close()


def _supported() -> bool:
    return (
        AsyncAdapt_aiosqlite_cursor is not None
        and hasattr(AsyncAdapt_aiosqlite_connection, "_cursor_cls")
        and hasattr(aiosqlite.Connection, "_execute")
        and {"_adapt_connection", "_connection", "_cursor", "_rows", "_soft_closed_memoized"}
        <= set(getattr(AsyncAdapt_aiosqlite_cursor, "__slots__", ()))
        | _inherited_slots(AsyncAdapt_aiosqlite_cursor)
    )


def _inherited_slots(cls: type) -> set[str]:
    return {slot for klass in cls.__mro__ for slot in getattr(klass, "__slots__", ())}


if _supported():

    class OneHopCursor(AsyncAdapt_aiosqlite_cursor):
        __slots__ = ("_arraysize", "_description", "_lastrowid", "_rowcount")

        def __init__(self, adapt_connection: OneHopConnection) -> None:
            # no cursor is opened here (the stock adapter spends a round trip on it)
            self._adapt_connection = adapt_connection
            self._connection = adapt_connection._connection
            self._cursor = None  # type: ignore[assignment]
            self._rows: collections.deque[Any] = collections.deque()
            self._soft_closed_memoized = EMPTY_DICT
            self._description: Any = None
            self._rowcount = -1
            self._lastrowid: Any = None
            self._arraysize = 1

        @property
        def description(self) -> Any:
            return self._description

        @property
        def rowcount(self) -> int:
            return self._rowcount

        @property
        def lastrowid(self) -> Any:
            return self._lastrowid

        @property
        def arraysize(self) -> int:
            return self._arraysize

        @arraysize.setter
        def arraysize(self, value: int) -> None:
            self._arraysize = value

        def execute(self, operation: Any, parameters: Any = None) -> Any:
            return self._one_hop(operation, parameters, many=False)

        def executemany(self, operation: Any, seq_of_parameters: Sequence[Any]) -> Any:
            return self._one_hop(operation, seq_of_parameters, many=True)

        def _one_hop(self, operation: Any, parameters: Any, *, many: bool) -> None:
            adapt: OneHopConnection = self._adapt_connection  # type: ignore[assignment]
            try:
                outcome = await_(self._on_thread(operation, parameters, many))
            except Exception as error:
                adapt.in_transaction = True  # unknown after a failure: never skip a rollback
                adapt._handle_exception(error)
            description, rows, self._rowcount, self._lastrowid, adapt.in_transaction = outcome
            self._description = description
            self._rows = collections.deque(rows or ())

        async def _on_thread(self, operation: Any, parameters: Any, many: bool) -> _Outcome:
            # aiosqlite runs a connection's calls one at a time, in order: one call cannot
            # interleave with another's fetch (the stock adapter's lock guards its two calls)
            connection = self._connection
            return await connection._execute(_run, connection._conn, operation, parameters, many)  # type: ignore[no-any-return]

        async def _async_soft_close(self) -> None:
            """Nothing to close: the cursor was closed on the thread."""

        def close(self) -> None:
            self._rows.clear()

    class OneHopConnection(AsyncAdapt_aiosqlite_connection):
        __slots__ = ("in_transaction",)
        _cursor_cls = OneHopCursor  # type: ignore[assignment]

        def __init__(self, dbapi: Any, connection: Any) -> None:
            super().__init__(dbapi, connection)
            self.in_transaction = True  # unknown until the first statement says

        def cursor(self, server_side: bool = False) -> Any:
            if server_side:
                self.in_transaction = True  # the stock path: its effect is not followed
            return super().cursor(server_side)

        def execute(self, *args: Any, **kwargs: Any) -> Any:
            self.in_transaction = True
            return super().execute(*args, **kwargs)

        def rollback(self) -> None:
            if self.in_transaction:
                super().rollback()
                self.in_transaction = False

        def commit(self) -> None:
            if self.in_transaction:
                super().commit()
                self.in_transaction = False

    class OneHopModule(AsyncAdapt_aiosqlite_dbapi):
        def connect(self, *arg: Any, **kw: Any) -> OneHopConnection:
            creator_fn = kw.pop("async_creator_fn", None)
            if creator_fn:
                connection = creator_fn(*arg, **kw)
            else:
                connection = self.aiosqlite.connect(*arg, **kw)
                worker = connection if isinstance(connection, Thread) else connection._thread
                worker.daemon = True  # as the stock adapter: never keep the process alive
            return OneHopConnection(self, await_(connection))


def one_hop_module() -> Any | None:
    """The DBAPI module for `create_async_engine(module=...)`, or None (stock adapter)."""
    if not _supported():
        log.debug("SQLite one-hop statements unavailable for this SQLAlchemy / aiosqlite")
        return None
    return OneHopModule(aiosqlite, sqlite3)
