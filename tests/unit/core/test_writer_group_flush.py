"""MessageWriter.flush(group_id): a reply's own group is stored ahead of a burst elsewhere.

The reply path flushes before it reads the group's timeline. Under a burst of thousands of
queued rows in other groups it used to wait until the writer was idle (the whole burst, and
whatever kept arriving meanwhile); now it waits for its own group's rows, written next.
"""

from __future__ import annotations

import asyncio

from pallas.core.db.writer import MessageWriter
from pallas.core.records import StoredMessage


class SlowRepository:
    """Stores in batches; each batch waits until the test lets one more through."""

    def __init__(self) -> None:
        self.batches: list[list[tuple[int, int]]] = []
        self.allowed = asyncio.Semaphore(0)

    def let_through(self, batches: int = 1_000) -> None:
        for _ in range(batches):
            self.allowed.release()

    async def add_many(self, messages: list[StoredMessage]) -> int:
        await self.allowed.acquire()
        self.batches.append([(m.group_id, m.message_id) for m in messages])
        return len(messages)


def _msg(group: int, mid: int) -> StoredMessage:
    return StoredMessage(bot_id=9, group_id=group, message_id=mid, user_id=5, time=1.0, text="x")


async def _turns(n: int = 5) -> None:
    for _ in range(n):
        await asyncio.sleep(0)


async def test_a_group_flush_writes_that_group_next_and_skips_the_backlog() -> None:
    repo = SlowRepository()
    writer = MessageWriter(repo, batch_size=10, linger=0)  # type: ignore[arg-type]
    writer.start()
    for i in range(30):  # a burst in group 1 …
        writer.submit(_msg(1, i))
    writer.submit(_msg(2, 100))  # … and the @ in group 2, last in line
    await _turns()  # the first batch of group 1 is in flight
    flushed = asyncio.ensure_future(writer.flush(2))
    await _turns()
    writer.submit(_msg(2, 101))  # submitted after the flush: not waited for
    repo.let_through(2)  # the batch in flight and one more; the rest of the burst stays queued
    await asyncio.wait_for(flushed, 5)
    assert repo.batches[0] == [(1, i) for i in range(10)], "the batch in flight is untouched"
    assert repo.batches[1] == [(2, 100)], "group 2 alone is the next batch"
    assert writer.queued > 0, "the flush did not wait for the rest of the burst"
    repo.let_through()
    await writer.flush()
    stored = [row for batch in repo.batches for row in batch]
    assert sorted(stored) == sorted([(1, i) for i in range(30)] + [(2, 100), (2, 101)])
    await writer.close()


async def test_a_full_flush_waits_for_what_was_submitted_before_it_only() -> None:
    repo = SlowRepository()
    writer = MessageWriter(repo, batch_size=5, linger=0)  # type: ignore[arg-type]
    writer.start()
    for i in range(8):
        writer.submit(_msg(1, i))
    flushed = asyncio.ensure_future(writer.flush())
    await _turns()
    for i in range(8, 50):  # a burst that keeps coming does not hold the flush
        writer.submit(_msg(1, i))
    repo.let_through(2)  # 10 rows: the 8 from before the flush are among them
    await asyncio.wait_for(flushed, 5)
    stored = {mid for batch in repo.batches for _, mid in batch}
    assert set(range(8)) <= stored and writer.queued == 40
    repo.let_through()
    await writer.close()
    assert writer.queued == 0 and writer.written == 50


async def test_flush_of_a_group_with_nothing_queued_returns_at_once() -> None:
    repo = SlowRepository()
    writer = MessageWriter(repo, batch_size=5, linger=0)  # type: ignore[arg-type]
    writer.start()
    writer.submit(_msg(1, 1))
    await asyncio.wait_for(writer.flush(3), 1)  # the database has not answered yet
    assert repo.batches == []
    repo.let_through()
    await writer.close()
