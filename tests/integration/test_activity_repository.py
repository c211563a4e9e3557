"""Today's activity through `MessageRepository` on a migrated database (each backend)."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from datetime import datetime
from itertools import count

import pytest
from sqlalchemy.ext.asyncio import async_sessionmaker

from pallas.core.clock import CHINA
from pallas.core.db import migrate
from pallas.core.db.engine import create_engine, session_factory
from pallas.core.db.repositories.messages import MessageRepository
from pallas.core.records import SpeakerCount, StoredMessage
from pallas.features.tools.registry import ToolEnv, default_registry

BOT, GROUP, OTHER_GROUP = 10_000, 555, 777
AMIYA, KALTSIT, TEXAS, NAMELESS = 1, 2, 3, 4
DAY = datetime(2026, 11, 29, tzinfo=CHINA).timestamp()  # China midnight
YESTERDAY = DAY - 86_400
_ids = count(1)


@pytest.fixture
async def repo(database_url: str) -> AsyncIterator[MessageRepository]:
    await migrate.upgrade(database_url)
    engine = create_engine(database_url)
    sessions: async_sessionmaker = session_factory(engine)
    yield MessageRepository(sessions)
    await engine.dispose()


def _msg(
    user_id: int,
    t: float,
    *,
    group_id: int = GROUP,
    card: str = "",
    nickname: str = "",
    is_bot: bool = False,
) -> StoredMessage:
    return StoredMessage(
        bot_id=BOT,
        group_id=group_id,
        message_id=next(_ids),
        user_id=user_id,
        time=t,
        text="聊天",
        card=card,
        nickname=nickname,
        is_bot=is_bot,
    )


async def _seed(repo: MessageRepository) -> None:
    today = [
        # Amiya: 3 messages; changed her card during the day, last message has no card.
        _msg(AMIYA, DAY + 60, card="旧名片", nickname="amiya"),
        _msg(AMIYA, DAY + 120, card="阿米娅", nickname="amiya"),
        _msg(AMIYA, DAY + 180, card="", nickname="amiya"),
        # Kaltsit: 3 messages, nickname only (ties with Amiya: lower user_id first).
        *(_msg(KALTSIT, DAY + 200 + i, nickname="凯尔希") for i in range(3)),
        # Texas: 1 message at 23:59:59.
        _msg(TEXAS, DAY + 86_399, card="德克萨斯"),
        # No card, no nickname.
        _msg(NAMELESS, DAY + 300),
        # The bot talks a lot, but is never ranked or counted.
        *(_msg(BOT, DAY + 400 + i, card="帕拉斯", is_bot=True) for i in range(10)),
        # The same members in another group.
        *(_msg(TEXAS, DAY + 500 + i, group_id=OTHER_GROUP, card="德克萨斯") for i in range(7)),
    ]
    yesterday = [*(_msg(TEXAS, YESTERDAY + i, card="德克萨斯") for i in range(20))]
    tomorrow = [_msg(AMIYA, DAY + 86_400, card="阿米娅")]  # exactly at the next midnight
    await repo.add_many(today + yesterday + tomorrow)


async def test_speaker_counts_for_one_group_and_day(repo: MessageRepository) -> None:
    await _seed(repo)
    speakers = await repo.speaker_counts(BOT, GROUP, since=DAY, until=DAY + 86_400, limit=10)
    assert speakers == [
        SpeakerCount(AMIYA, "阿米娅", 3),  # the latest non-empty card
        SpeakerCount(KALTSIT, "凯尔希", 3),
        SpeakerCount(TEXAS, "德克萨斯", 1),
        SpeakerCount(NAMELESS, "群友#0004", 1),
    ]
    assert await repo.message_count(BOT, GROUP, since=DAY, until=DAY + 86_400) == 8


async def test_limit_and_other_windows(repo: MessageRepository) -> None:
    await _seed(repo)
    top = await repo.speaker_counts(BOT, GROUP, since=DAY, until=DAY + 86_400, limit=2)
    assert [s.user_id for s in top] == [AMIYA, KALTSIT]
    assert await repo.speaker_counts(BOT, GROUP, since=DAY, until=DAY + 86_400, limit=0) == []
    yesterday = await repo.speaker_counts(BOT, GROUP, since=YESTERDAY, until=DAY, limit=5)
    assert yesterday == [SpeakerCount(TEXAS, "德克萨斯", 20)]
    other = await repo.speaker_counts(BOT, OTHER_GROUP, since=DAY, until=DAY + 86_400, limit=5)
    assert other == [SpeakerCount(TEXAS, "德克萨斯", 7)]
    assert await repo.message_count(BOT, OTHER_GROUP, since=DAY, until=DAY + 86_400) == 7
    # another account of the deployment in the group counts the group's lines, not its own
    assert await repo.message_count(BOT + 1, GROUP, since=DAY, until=DAY + 86_400) == 8
    empty = await repo.speaker_counts(BOT, GROUP, since=DAY + 86_401, until=DAY + 90_000, limit=5)
    assert empty == []


async def test_activity_tool_reads_the_repository(repo: MessageRepository) -> None:
    await _seed(repo)
    registry = default_registry()
    call = registry.select("今天谁最活跃", registry.names)
    assert call is not None
    env = ToolEnv(BOT, GROUP, AMIYA, DAY + 12 * 3600, random.Random(1), repo)
    output = await registry.run(call, env)
    assert output.ok
    assert output.content == (
        "今天（11月29日）群里共 8 条消息；发言最多："
        "阿米娅 3 条、凯尔希 3 条、德克萨斯 1 条、群友#0004 1 条"
    )
