"""The runtime's ingest events: what the message writer takes reaches the warm state built over it
(`pallas.core.db.ingest_events`), which subscribes when it is built — nothing appends afterwards."""

from __future__ import annotations

from pallas.core.clock import FakeClock
from pallas.core.db.ingest_events import IngestEvents
from pallas.core.db.message_cache import MessageCache
from pallas.core.db.writer import MessageWriter
from pallas.core.group_preload import GroupPreload
from pallas.core.records import StoredMessage


class _Repository:
    async def add_many(self, messages: list[StoredMessage]) -> int:
        return len(messages)

    async def recent(self, bot_id: int, group_id: int, *, limit: int) -> list[StoredMessage]:
        return []


class _Config:
    enabled = True


def _msg(group: int, mid: int) -> StoredMessage:
    return StoredMessage(bot_id=9, group_id=group, message_id=mid, user_id=5, time=mid, text="x")


def test_listeners_hear_in_the_order_they_subscribed() -> None:
    events, heard = IngestEvents(), []
    events.subscribe(submitted=lambda m: heard.append(("first", m.message_id)))
    events.subscribe(
        submitted=lambda m: heard.append(("second", m.message_id)),
        stored=lambda batch: heard.append(("stored", len(batch))),
    )
    events.submitted(_msg(1, 7))
    events.stored([_msg(1, 7), _msg(1, 8)])
    assert heard == [("first", 7), ("second", 7), ("stored", 2)]


async def test_a_submit_reaches_the_message_cache_and_the_preload_built_with_the_events() -> None:
    events = IngestEvents()
    repo = _Repository()
    writer = MessageWriter(repo, linger=0, events=events)  # type: ignore[arg-type]
    cache = MessageCache(repo, unstored=writer.unstored, events=events)  # type: ignore[arg-type]
    warmed: list[int] = []

    async def load(bot_id: int, group_id: int, config: _Config, now: float) -> None:
        warmed.append(group_id)

    preload = GroupPreload(
        [load], clock=FakeClock(100.0), group_config=lambda _g: _Config(), events=events
    )
    assert await cache.recent(9, 501, limit=5) == []  # the group's window, built empty
    writer.submit(_msg(501, 1))
    writer.submit(_msg(502, 2))
    assert [m.message_id for m in await cache.recent(9, 501, limit=5)] == [1]  # not stored yet
    await preload.drain()
    assert warmed == [501, 502]
    await writer.close()
