"""The writer's executemany inserts store what the ORM inserts stored: every field, a
re-delivered message once, on every backend."""

from __future__ import annotations

from pallas.core.db import migrate
from pallas.core.db.engine import create_engine, session_factory
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
        fast, orm = BatchInsertMessageRepository(sessions), MessageRepository(sessions)
        seen: list[int] = []
        fast.listeners.append(lambda batch: seen.extend(m.message_id for m in batch))
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
