"""Message recording that a busy event loop cannot starve: the writer on its own thread.

`MessageWriter` batches on the event loop it runs on. Under a burst the bot's loop is busy with
routing and replies, the writer task gets no turn, and a crash loses everything still queued
(seconds of messages). `ThreadedMessageWriter` runs the same `MessageWriter` — same batching,
same retry with backoff while the database is down, same "drop only a refused row" — on a
dedicated thread with its own event loop and its own engine built from the database URL, so a
submitted message is committed within the writer's linger (20 ms, plus at most
`INBOX_INTERVAL_S` in its inbox) and one commit, whatever the bot's loop is doing. SQLite
(WAL, synchronous=NORMAL: a commit survives kill -9) and PostgreSQL (asyncpg in the writer's
own loop) both work by URL.

`submit` is thread-safe and never blocks; `flush` / `close` are awaited from the bot's loop.
`unstored(group_id)` (the bot's thread) lists a group's messages submitted and not stored yet:
the submitting thread keeps them per group, and the writer's thread hands back each batch it
has stored or dropped through a deque, so a message leaves that list only after its commit.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import logging
import math
import threading
import time
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from pallas.core.db.engine import create_engine, session_factory
from pallas.core.db.ingest_events import IngestEvents
from pallas.core.db.message_inserts import BatchInsertMessageRepository
from pallas.core.db.repositories.messages import MessageRepository
from pallas.core.db.writer import MessageWriter
from pallas.core.records import StoredMessage

log = logging.getLogger("pallas.recorder")

T = TypeVar("T")
# how often, at most, a burst of submits wakes the writer's loop (its linger is 20 ms anyway)
INBOX_INTERVAL_S = 0.005
RepositoryFactory = Callable[[async_sessionmaker[AsyncSession]], MessageRepository]


class ThreadedMessageWriter:
    def __init__(
        self,
        url: str,
        *,
        batch_size: int = 500,
        linger: float = 0.02,
        repository: RepositoryFactory = BatchInsertMessageRepository,
        events: IngestEvents | None = None,
    ) -> None:
        self._url = url
        self._batch_size = batch_size
        self._linger = linger
        self._repository = repository
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._writer: MessageWriter | None = None
        self._ready = threading.Event()
        self._failure: BaseException | None = None
        self.submitted = 0
        self._inbox: collections.deque[StoredMessage] = collections.deque()
        self._wake_pending = False
        self._last_round = -math.inf  # when the writer's thread last collected the inbox
        self.rounds = 0  # how often it did (wake-ups and follow-up rounds)
        # told on the submitting thread of every message (warm caches of recent rows)
        self._submitted = (events or IngestEvents()).submitted
        # submitted, not known to be stored: group → {id(message): message}, in submit order
        # (the submitting thread's; the writer's thread appends what it finished to `_done`)
        self._unstored: dict[int, dict[int, StoredMessage]] = {}
        self._done: collections.deque[list[StoredMessage]] = collections.deque()

    @property
    def written(self) -> int:
        return self._writer.written if self._writer else 0

    @property
    def dropped(self) -> int:
        return self._writer.dropped if self._writer else 0

    @property
    def queued(self) -> int:
        """Submitted and not yet stored nor dropped (a snapshot across threads)."""
        return max(self.submitted - self.written - self.dropped, 0)

    def start(self) -> None:
        if self._thread is not None:
            return
        self._thread = threading.Thread(
            target=self._main, name="pallas-message-writer", daemon=True
        )
        self._thread.start()
        self._ready.wait()
        if self._failure is not None:
            raise RuntimeError("the message writer thread did not start") from self._failure

    def submit(self, message: StoredMessage) -> None:
        loop = self._loop
        if loop is None or self._writer is None or loop.is_closed():
            log.error("message %s submitted while the writer is stopped", message.message_id)
            return
        self.submitted += 1
        self._forget_done()
        self._unstored.setdefault(message.group_id, {})[id(message)] = message
        # One wake-up of the writer's loop per batch of submits, not one per message (each
        # wake-up is a write to the loop's self-pipe, on the caller's — the bot's — thread):
        # after a wake-up the writer collects the inbox again `INBOX_INTERVAL_S` later itself,
        # and only then asks for the next one. Append first, read the flag second (`_rearm`).
        self._inbox.append(message)
        if not self._wake_pending:
            self._wake_pending = True
            loop.call_soon_threadsafe(self._drain_inbox)
        self._submitted(message)

    def unstored(self, group_id: int) -> list[StoredMessage]:
        """The group's messages submitted and not stored (nor dropped) yet, oldest first — a
        message committed a moment ago may still be listed (never the other way round)."""
        self._forget_done()
        return list(self._unstored.get(group_id, {}).values())

    def _forget_done(self) -> None:
        while self._done:
            for message in self._done.popleft():
                # (an emptied group keeps its dict: a submit on another thread may hold it)
                self._unstored.get(message.group_id, {}).pop(id(message), None)

    def _drain_inbox(self) -> None:
        """On the writer's loop, woken by `submit`: hand the inbox to the writer. Within a
        burst (the last round less than `INBOX_INTERVAL_S` ago) submits until the next
        interval wake nobody (`_rearm` collects them); an isolated submit leaves no round
        behind — the thread would take the GIL again 5 ms later for nothing, in the middle of
        the turn that answers the message it just took."""
        now = time.monotonic()
        if now - self._last_round >= INBOX_INTERVAL_S:  # quiet: collect and re-open now
            self._rearm()
            return
        self._last_round = now
        self.rounds += 1
        self._move_inbox()
        assert self._loop is not None
        self._loop.call_later(INBOX_INTERVAL_S, self._rearm)

    def _rearm(self) -> None:
        self._last_round = time.monotonic()
        self.rounds += 1
        # A submit that saw the flag still set had appended before this reset: moved below.
        self._wake_pending = False
        self._move_inbox()

    def _move_inbox(self) -> None:
        """Everything submitted so far to the writer, in order."""
        assert self._writer is not None
        while self._inbox:
            self._writer.submit(self._inbox.popleft())

    async def flush(self, group_id: int | None = None) -> None:
        """Wait until everything submitted so far is stored (or the writer stopped); with
        `group_id`, only that group's messages, written ahead of other groups' backlog."""
        if self._writer is not None:
            await self._on_writer_loop(self._flush(group_id))

    async def _flush(self, group_id: int | None) -> None:
        self._move_inbox()
        assert self._writer is not None
        await self._writer.flush(group_id)

    async def close(self) -> None:
        thread, loop = self._thread, self._loop
        if thread is None or loop is None or self._writer is None:
            return
        try:
            await self._on_writer_loop(self._close())
        finally:
            loop.call_soon_threadsafe(loop.stop)
            await asyncio.to_thread(thread.join, 10)
            self._thread = None

    async def _close(self) -> None:
        self._move_inbox()
        assert self._writer is not None
        await self._writer.close()

    async def _on_writer_loop(self, coro: Coroutine[Any, Any, T]) -> T:
        assert self._loop is not None
        future: concurrent.futures.Future[T] = asyncio.run_coroutine_threadsafe(coro, self._loop)
        return await asyncio.wrap_future(future)

    def _main(self) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        try:
            engine = create_engine(self._url)
            self._writer = MessageWriter(
                self._repository(session_factory(engine)),
                batch_size=self._batch_size,
                linger=self._linger,
                done_listeners=(self._done.append,),
            )
            loop.run_until_complete(self._start_writer())
        except BaseException as error:  # reported by start()
            self._failure = error
            self._ready.set()
            loop.close()
            return
        self._loop = loop
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            loop.run_until_complete(engine.dispose())
            loop.close()

    async def _start_writer(self) -> None:
        assert self._writer is not None
        self._writer.start()


def build_message_writer(
    url: str, repository: MessageRepository, *, events: IngestEvents | None = None
) -> MessageWriter | ThreadedMessageWriter:
    """The writer for `url`: on its own thread, except for an in-memory SQLite database (only
    the bot's own engine can see that one, and nothing in it survives a crash anyway);
    `events` hears every submit."""
    if url.startswith("sqlite") and (":memory:" in url or url.rstrip("/").endswith(":")):
        return MessageWriter(repository, events=events)
    return ThreadedMessageWriter(url, events=events)
