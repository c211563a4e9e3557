"""Batched, non-blocking message recording.

Event handlers hand messages to `MessageWriter.submit` and return at once; a background task
writes them in batches (one transaction per batch), so a burst of events costs a few commits
instead of one each. A failing write is logged and retried with backoff — messages are kept in
memory until they are stored. Readers that need the newest rows call `flush()` first; a reader
that needs one group's rows calls `flush(group_id)`: that group's queued rows are written next,
ahead of a burst in other groups, and the call returns once they are stored (what was submitted
before the call — later submits never make a flush wait longer).

`unstored(group_id)` lists a group's messages submitted and not stored yet (a batch being
written included), so a reader can merge them with what it reads instead of flushing.

A batch the database refuses because of the values in it (an id out of the 64-bit range, a NOT
NULL time that is NaN, … — see `refuses_values`) is stored one message at a time instead, and
only the messages refused on their own are dropped (logged). Without that, one such message
would fail its batch on every retry and hold up all recording behind it. Any other failure (the
database down, locked or full) drops nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Sequence

from sqlalchemy import exc as sa_exc

from pallas.core.db.ingest_events import IngestEvents
from pallas.core.db.repositories.messages import MessageRepository
from pallas.core.records import StoredMessage

log = logging.getLogger("pallas.recorder")

# Python-side conversion errors (SQLite raises OverflowError for ints past 64 bits, either
# driver UnicodeEncodeError for text it cannot encode) and SQLSTATE classes 22 (data exception)
# and 23 (integrity constraint violation): errors about the values, not about the database.
_VALUE_ERRORS = (ValueError, TypeError, OverflowError, UnicodeError)
_VALUE_SQLSTATE_CLASSES = ("22", "23")


def refuses_values(error: BaseException) -> bool:
    """Whether `error` says the database refuses the values written, not that it is unwell."""
    if isinstance(error, (*_VALUE_ERRORS, sa_exc.IntegrityError, sa_exc.DataError)):
        return True
    original = getattr(error, "orig", None)
    if isinstance(original, _VALUE_ERRORS):
        return True
    sqlstate = getattr(original, "sqlstate", None) or getattr(original, "pgcode", None)
    return isinstance(sqlstate, str) and sqlstate[:2] in _VALUE_SQLSTATE_CLASSES


class MessageWriter:
    def __init__(
        self,
        repository: MessageRepository,
        *,
        batch_size: int = 500,
        linger: float = 0.02,
        done_listeners: Sequence[Callable[[list[StoredMessage]], None]] = (),
        events: IngestEvents | None = None,
    ) -> None:
        self._repo = repository
        self._batch_size = batch_size
        self._linger = linger
        self._pending: list[tuple[int, StoredMessage]] = []  # (submit sequence, message)
        self._seq = 0
        self._inflight = 0  # rows at the front of _pending being stored right now
        self._forward = 0  # rows behind those that a group flush waits for: the next batch
        self._waiters: list[tuple[Callable[[], bool], asyncio.Future[None]]] = []
        self._wakeup = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._task: asyncio.Task[None] | None = None
        self._closing = False
        self.written = 0
        self.dropped = 0  # refused by the database on their own (see the module docstring)
        self._submitted = (events or IngestEvents()).submitted  # told of every submit
        # told of every batch once it is done (stored or dropped), on the writer's loop
        self.done_listeners = tuple(done_listeners)
        self._writing: list[tuple[int, StoredMessage]] = []  # `_write_pending_once`'s batch

    @property
    def queued(self) -> int:
        """Submitted and not yet stored (nor dropped)."""
        return len(self._pending)

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="pallas-message-writer")

    def submit(self, message: StoredMessage) -> None:
        self._seq += 1
        self._pending.append((self._seq, message))
        self._idle.clear()
        self._wakeup.set()
        self._submitted(message)

    def unstored(self, group_id: int) -> list[StoredMessage]:
        """The group's messages submitted and not stored (nor dropped) yet, oldest first."""
        rows = [*self._writing, *self._pending]
        return [message for _, message in rows if message.group_id == group_id]

    async def flush(self, group_id: int | None = None) -> None:
        """Wait until everything submitted so far is stored (or the writer stopped); with
        `group_id`, only that group's messages, which are written next."""
        if self._task is None or self._task.done():
            await self._write_pending_once()
            return
        upto = self._seq
        if group_id is not None:
            self._bring_forward(group_id)
        done = self._stored_predicate(upto, group_id)
        if done():
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append((done, future))
        self._wakeup.set()
        try:
            await future
        finally:
            self._waiters = [w for w in self._waiters if w[1] is not future]

    def _stored_predicate(self, upto: int, group_id: int | None) -> Callable[[], bool]:
        if group_id is None:
            return lambda: all(seq > upto for seq, _ in self._pending)
        return lambda: (
            not any(seq <= upto and message.group_id == group_id for seq, message in self._pending)
        )

    def _bring_forward(self, group_id: int) -> None:
        """Move the group's queued rows right behind the batch being stored (order kept); the
        next batch is just the rows brought forward, so the flush waits for two small-to-normal
        batches at most, not for the backlog."""
        head, rest = self._pending[: self._inflight], self._pending[self._inflight :]
        # rows already brought forward by another flush stay first
        front, rest = rest[: self._forward], rest[self._forward :]
        mine = [row for row in rest if row[1].group_id == group_id]
        if mine:
            others = [row for row in rest if row[1].group_id != group_id]
            self._pending = head + front + mine + others
            self._forward += len(mine)

    def _wake_waiters(self, everyone: bool = False) -> None:
        for done, future in self._waiters:
            if not future.done() and (everyone or done()):
                future.set_result(None)

    async def close(self) -> None:
        self._closing = True
        self._wakeup.set()
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self._write_pending_once()
        self._wake_waiters(everyone=True)

    async def _run(self) -> None:
        backoff = 0.1
        try:
            while True:
                await self._wakeup.wait()
                self._wakeup.clear()
                if self._linger and not self._closing and not self._waiters:
                    await asyncio.sleep(self._linger)  # let a burst accumulate
                while self._pending:
                    size = min(self._forward or self._batch_size, self._batch_size)
                    batch = [message for _, message in self._pending[:size]]
                    self._forward -= min(self._forward, size)  # now counted in _inflight
                    self._inflight = len(batch)
                    try:
                        done = await self._store(batch)
                    except Exception:
                        log.exception(
                            "storing %d messages failed; retrying in %.1fs", len(batch), backoff
                        )
                        await asyncio.sleep(backoff)
                        backoff = min(backoff * 2, 5.0)
                        if self._closing:
                            return
                        continue
                    finally:
                        self._inflight = 0
                    backoff = 0.1
                    self._done(batch[:done])
                    del self._pending[:done]
                    self._wake_waiters()
                self._idle.set()
                self._wake_waiters()
                if self._closing:
                    return
        finally:
            self._wake_waiters(everyone=True)

    async def _write_pending_once(self) -> None:
        if not self._pending:
            self._idle.set()
            return
        rows, self._pending = self._pending, []
        self._writing = rows
        try:
            done = await self._store([message for _, message in rows])
        except Exception:
            done = 0
            log.exception("final write of %d messages failed", len(rows))
        finally:
            self._writing = []
        self._done([message for _, message in rows[:done]])
        self._pending = rows[done:] + self._pending
        self._idle.set()

    def _done(self, messages: list[StoredMessage]) -> None:
        for listener in self.done_listeners if messages else ():
            try:
                listener(messages)
            except Exception:
                log.exception("a stored-batch listener failed")

    async def _store(self, batch: list[StoredMessage]) -> int:
        """Store `batch`; returns how many of its first messages are done (stored or dropped).

        Raises, having stored nothing, when the batch fails for any reason but its values.
        """
        try:
            await self._repo.add_many(batch)
        except Exception as error:
            if not refuses_values(error):
                raise
            log.warning("the database refused a batch of %d messages: %s", len(batch), error)
        else:
            self.written += len(batch)
            return len(batch)
        for done, message in enumerate(batch):
            try:
                await self._repo.add_many([message])
            except Exception as error:
                if not refuses_values(error):
                    if done:
                        return done  # the rest is retried with backoff
                    raise
                self.dropped += 1
                log.error(
                    "dropped message %s of group %s (bot %s, user %s): the database refuses it: %s",
                    message.message_id, message.group_id, message.bot_id, message.user_id, error,
                )  # fmt: skip
            else:
                self.written += 1
        return len(batch)
