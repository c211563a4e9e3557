"""The writer's executemany inserts store what the ORM inserts stored: every field, a
re-delivered message once, on every backend."""

from __future__ import annotations

from pallas.core.db import migrate
from pallas.core.db.engine import create_engine, session_factory
from pallas.core.db.ingest_events import IngestEvents
from pallas.core.db.message_inserts import BatchInsertMessageRepository
from pallas.core.db.repositories.messages import MessageRepository
from pallas.core.records import StoredMessage

BOT, GROUP = 3_000_000_001, 9_876_543_210


def message(message_id: int, **changes: object) -> StoredMessage:
    fields: dict[str, object] = {
        "bot_id": BOT, "group_id": GROUP, "message_id": message_id, "user_id": 51,
        "time": 1.0e9 + message_id, "text": f"聊天{message_id}", "card": "群名片",
        "segments": ({"type": "text", "data": {"text": f"聊天{message_id}"}},),
    }  # fmt: skip
    fields.update(changes)
    return StoredMessage(**fields)  # type: ignore[arg-type]


async def test_a_batch_is_stored_whole_and_a_repeat_is_ignored(database_url: str) -> None:
    await migrate.upgrade(database_url)
    engine = create_engine(database_url)
    try:
        sessions = session_factory(engine)
        seen: list[int] = []
        events = IngestEvents()
        events.subscribe(stored=lambda batch: seen.extend(m.message_id for m in batch))
        fast = BatchInsertMessageRepository(sessions, events=events)
        orm = MessageRepository(sessions)
        await fast.add_many([message(i) for i in range(450)])
        await fast.add_many([message(7, text="重发"), message(450, reply_to=3)])
        assert await orm.count() == 451
        rows = await orm.recent(BOT, GROUP, limit=3)
        assert [r.message_id for r in rows] == [448, 449, 450]
        assert rows[-1].reply_to == 3 and rows[0].card == "群名片"
        assert rows[0].segments == ({"type": "text", "data": {"text": "聊天448"}},)
        first = await orm.recent(BOT, GROUP, limit=1, before_time=1.0e9 + 8)
        assert first[0].message_id == 7 and first[0].text == "聊天7", "the first copy stays"
        assert len(seen) == 452, "listeners hear every batch"
    finally:
        await engine.dispose()


async def test_another_accounts_copy_of_a_line_is_refused_by_both_inserts(
    database_url: str,
) -> None:
    """Two accounts in one group: the same line key (pallas.core.lines) is stored once, with
    either insert; lines without a key (the bot's own sent messages) are never refused."""
    await migrate.upgrade(database_url)
    engine = create_engine(database_url)
    other = BOT + 1
    try:
        sessions = session_factory(engine)
        fast, orm = BatchInsertMessageRepository(sessions), MessageRepository(sessions)
        for repo, base in ((fast, 0), (orm, 100)):
            first = message(base + 1, line_key=f"fp{base}:1")
            again = message(base + 2, line_key=f"fp{base}:2")  # the same line said twice
            copies = [
                message(base + 50_001, bot_id=other, line_key=f"fp{base}:1"),
                message(base + 50_002, bot_id=other, line_key=f"fp{base}:2"),
            ]
            sent = [message(base + 3, is_bot=True), message(base + 50_003, bot_id=other)]
            await repo.add_many([first, again, *sent])
            await repo.add_many(copies)
        rows = await orm.recent(other, GROUP, limit=20)
        assert [(r.bot_id, r.message_id) for r in rows] == [
            (BOT, 1), (BOT, 2), (BOT, 3), (BOT, 101), (BOT, 102), (BOT, 103),
            (other, 50_003), (other, 50_103),
        ]  # fmt: skip
        assert rows == await orm.recent(BOT, GROUP, limit=20), "one group, one timeline"
        assert await orm.find_by_message_ids(other, GROUP, [50_001, 50_003]) == {50_003: rows[6]}, (
            "a message id is the account's own"
        )
    finally:
        await engine.dispose()
