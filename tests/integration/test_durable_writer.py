"""The message writer on its own thread: what is submitted gets committed while the bot's event
loop never yields, on every backend, with the old guarantees (retry while the database is down,
drop only a refused row)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
from collections.abc import Iterable

from pallas.core.db import migrate
from pallas.core.db.durable_writer import (
    INBOX_INTERVAL_S,
    ThreadedMessageWriter,
    build_message_writer,
)
from pallas.core.db.engine import create_engine, session_factory
from pallas.core.db.repositories.messages import MessageRepository
from pallas.core.db.writer import MessageWriter
from pallas.core.records import StoredMessage

BOT, GROUP = 3_000_000_001, 9_876_543_210


def message(message_id: int, text: str = "聊天") -> StoredMessage:
    return StoredMessage(
        bot_id=BOT, group_id=GROUP, message_id=message_id, user_id=51, time=1.0e9 + message_id,
        text=text,
    )  # fmt: skip


async def _count(url: str) -> int:
    engine = create_engine(url)
    try:
        return await MessageRepository(session_factory(engine)).count()
    finally:
        await engine.dispose()


def count_from_another_thread(url: str) -> int:
    """Count stored rows without letting the calling event loop run (it stays blocked)."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, _count(url)).result()


async def test_messages_are_committed_while_the_bot_loop_never_yields(database_url: str) -> None:
    await migrate.upgrade(database_url)
    writer = ThreadedMessageWriter(database_url)
    writer.start()
    try:
        for i in range(300):
            writer.submit(message(i))
        # The loop is now blocked (a saturated bot): no await until the rows are stored.
        stored, deadline = 0, time.monotonic() + 20
        while stored < 300 and time.monotonic() < deadline:
            time.sleep(0.02)  # noqa: ASYNC251 - the point: the loop must not run
            stored = count_from_another_thread(database_url)
        assert stored == 300, "the writer needs no time on the bot's event loop"
    finally:
        await writer.close()
    assert (writer.submitted, writer.written, writer.dropped) == (300, 300, 0)


async def test_threaded_writer_retries_while_down_and_drops_only_a_refused_row(
    database_url: str,
) -> None:
    await migrate.upgrade(database_url)

    class Down(MessageRepository):
        failures = 2

        async def add_many(self, messages: Iterable[StoredMessage]) -> int:
            if Down.failures:
                Down.failures -= 1
                raise ConnectionRefusedError(111, "Connect call failed")
            return await super().add_many(messages)

    writer = ThreadedMessageWriter(database_url, repository=Down, linger=0)
    writer.start()
    try:
        writer.submit(message(1, "第一条"))
        writer.submit(message(2**64, "超出 64 位的 id"))
        writer.submit(message(3, "之后的消息"))
        await asyncio.wait_for(writer.flush(), 20)
    finally:
        await writer.close()
    assert (writer.written, writer.dropped) == (2, 1)
    assert count_from_another_thread(database_url) == 2
    writer.submit(message(4))  # after close: logged, not raised


def test_an_in_memory_database_keeps_the_writer_on_the_loop() -> None:
    repo = MessageRepository(session_factory(create_engine("sqlite+aiosqlite://")))
    assert isinstance(build_message_writer("sqlite+aiosqlite:///:memory:", repo), MessageWriter)
    assert isinstance(build_message_writer("sqlite+aiosqlite://", repo), MessageWriter)
    assert isinstance(
        build_message_writer("sqlite+aiosqlite:////tmp/x.db", repo), ThreadedMessageWriter
    )


async def test_trickled_submits_are_all_committed_without_a_flush(database_url: str) -> None:
    """A burst wakes the writer once per `INBOX_INTERVAL_S`; a message submitted just after an
    interval ended — or long after — is still committed without anyone flushing."""
    await migrate.upgrade(database_url)
    writer = ThreadedMessageWriter(database_url)
    writer.start()
    try:
        gaps = [0.0, 0.001, INBOX_INTERVAL_S, INBOX_INTERVAL_S * 1.5, 0.0, 0.05, 0.0]
        for i, gap in enumerate(gaps * 20):
            writer.submit(message(10_000 + i))
            time.sleep(gap)  # noqa: ASYNC251 - the bot's thread busy between submits
        stored, deadline = 0, time.monotonic() + 20
        while stored < len(gaps) * 20 and time.monotonic() < deadline:
            time.sleep(0.02)  # noqa: ASYNC251 - no flush, no await: the writer alone
            stored = count_from_another_thread(database_url)
        assert stored == len(gaps) * 20
    finally:
        await writer.close()


async def test_an_isolated_message_wakes_the_writer_thread_once_and_a_burst_once_per_interval(
    database_url: str,
) -> None:
    """The writer thread takes the GIL whenever it runs: one round for a lone message (no
    follow-up round 5 ms later, in the middle of the turn answering it), and under a burst
    a wake-up and a follow-up round per `INBOX_INTERVAL_S`, however many messages it brings."""
    await migrate.upgrade(database_url)
    writer = ThreadedMessageWriter(database_url)
    writer.start()
    try:
        writer.submit(message(1))
        await asyncio.sleep(INBOX_INTERVAL_S * 6)
        assert writer.rounds == 1
        await asyncio.sleep(INBOX_INTERVAL_S * 2)
        burst_started, before = time.monotonic(), writer.rounds
        for i in range(200):  # ~100 ms of 2,000 msg/s
            writer.submit(message(100 + i))
            await asyncio.sleep(0.0005)
        await asyncio.sleep(INBOX_INTERVAL_S * 2)
        intervals = (time.monotonic() - burst_started) / INBOX_INTERVAL_S
        assert writer.rounds - before <= 2 * intervals + 2
        await asyncio.wait_for(writer.flush(), 20)
        assert writer.written == 201
    finally:
        await writer.close()


async def test_every_submitted_message_is_unstored_or_committed_at_every_moment(
    database_url: str,
) -> None:
    """`unstored(group)` (listed before a read) plus that read cover every message of the group
    submitted so far — the warm timeline's first read relies on it instead of a flush."""
    await migrate.upgrade(database_url)
    engine = create_engine(database_url)
    repo = MessageRepository(session_factory(engine))
    writer = ThreadedMessageWriter(database_url, batch_size=50)
    writer.start()
    other = 1_234
    try:
        submitted: set[int] = set()
        for round_ in range(40):
            for i in range(25):
                mid = round_ * 100 + i
                writer.submit(message(mid))
                writer.submit(StoredMessage(BOT, other, mid, 52, 1.0e9 + mid, "别群"))
                submitted.add(mid)
            listed = {m.message_id for m in writer.unstored(GROUP)}
            rows = await repo.recent(BOT, GROUP, limit=10_000)
            assert submitted <= listed | {m.message_id for m in rows}
            assert all(m.group_id == GROUP for m in writer.unstored(GROUP))
            await asyncio.sleep(0.001 * (round_ % 3))
        await writer.flush()
        assert writer.unstored(GROUP) == [] and writer.unstored(other) == []
    finally:
        await writer.close()
        await engine.dispose()


async def test_the_loop_writer_lists_a_batch_being_stored_until_it_is(database_url: str) -> None:
    await migrate.upgrade(database_url)
    engine = create_engine(database_url)
    repo = MessageRepository(session_factory(engine))
    release = asyncio.Event()
    add_many = repo.add_many

    async def slow_add_many(batch: Iterable[StoredMessage]) -> None:
        await release.wait()
        await add_many(batch)

    repo.add_many = slow_add_many  # type: ignore[method-assign]
    writer = MessageWriter(repo, linger=0)
    writer.start()
    try:
        writer.submit(message(1))
        writer.submit(message(2))
        await asyncio.sleep(0.01)  # the batch is being stored
        assert [m.message_id for m in writer.unstored(GROUP)] == [1, 2]
        release.set()
        await writer.flush()
        assert writer.unstored(GROUP) == []
    finally:
        await writer.close()
        await engine.dispose()
