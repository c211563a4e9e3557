from pathlib import Path

import pytest

from pallas.core.db import migrate
from pallas.core.db.engine import create_engine, session_factory
from pallas.core.db.repositories.chat_sessions import ChatSessionRepository
from pallas.core.db.repositories.messages import MessageRepository
from pallas.core.db.writer import MessageWriter
from pallas.core.records import SessionTurn, StoredMessage


@pytest.fixture
async def sessions(tmp_path: Path):
    url = f"sqlite+aiosqlite:///{tmp_path / 't.db'}"
    await migrate.upgrade(url)
    engine = create_engine(url)
    yield session_factory(engine)
    await engine.dispose()


def _msg(mid: int, t: float, group: int = 1, text: str = "x") -> StoredMessage:
    return StoredMessage(bot_id=9, group_id=group, message_id=mid, user_id=5, time=t, text=text)


@pytest.mark.parametrize("mid", [-1, -(2**62), 2**31 + 5, 2**62, 0])
async def test_any_signed_64_bit_message_id_round_trips(sessions, mid: int) -> None:
    repo = MessageRepository(sessions)
    assert await repo.add(_msg(mid, 1.0))
    assert (await repo.find_by_message_ids(9, 1, [mid]))[mid].message_id == mid


async def test_duplicate_events_are_stored_once(sessions) -> None:
    repo = MessageRepository(sessions)
    assert await repo.add_many([_msg(1, 1.0), _msg(1, 1.0), _msg(2, 2.0)]) == 2
    assert await repo.count() == 2


async def test_recent_is_scoped_and_oldest_first(sessions) -> None:
    repo = MessageRepository(sessions)
    await repo.add_many([_msg(i, float(i)) for i in range(10)] + [_msg(100, 5.5, group=2)])
    recent = await repo.recent(9, 1, limit=3)
    assert [m.message_id for m in recent] == [7, 8, 9]
    assert all(m.group_id == 1 for m in await repo.recent(9, 1, limit=50))


async def test_writer_flush_makes_burst_visible(sessions) -> None:
    repo = MessageRepository(sessions)
    writer = MessageWriter(repo)
    writer.start()
    for i in range(1000):
        writer.submit(_msg(i, float(i)))
    await writer.flush()
    assert await repo.count() == 1000
    await writer.close()


async def test_writer_keeps_messages_while_database_fails(sessions) -> None:
    class Flaky(MessageRepository):
        failures = 2

        async def add_many(self, messages):
            if self.failures:
                self.failures -= 1
                raise RuntimeError("database is locked")
            return await super().add_many(messages)

    repo = Flaky(sessions)
    writer = MessageWriter(repo)
    writer.start()
    writer.submit(_msg(1, 1.0))
    await writer.flush()
    assert await repo.count() == 1
    await writer.close()


async def test_session_summary_replaces_rows_atomically(sessions) -> None:
    repo = ChatSessionRepository(sessions)
    await repo.append(
        SessionTurn(9, 1, 5, "user" if i % 2 == 0 else "assistant", f"t{i}", float(i))
        for i in range(6)
    )
    rows = await repo.all_for_user(9, 1, 5)
    summary = SessionTurn(9, 1, 5, "user", "【此前对话摘要】聊了天气", 10.0, is_summary=True)
    await repo.replace_with_summary(summary, [r.row_id for r in rows[:4]])
    left = await repo.all_for_user(9, 1, 5)
    assert [t.content for t in left] == ["t4", "t5", "【此前对话摘要】聊了天气"]
    assert (await repo.latest_summary(9, 1, 5)).is_summary
