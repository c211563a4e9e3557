"""The sticker pool on a real database of each backend: counts, dedupe by bytes, isolation."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from pallas.core.db import migrate
from pallas.core.db.engine import create_engine, session_factory
from pallas.features.stickers.repository import DESCRIBED, Sighting, StickerRepository

BOT, GROUP, OTHER = 2_900_000_001, 68_000_001, 68_000_002
NOW = 1_790_000_000.0


@pytest.fixture
async def repo(database_url: str) -> AsyncIterator[StickerRepository]:
    await migrate.upgrade(database_url)
    engine = create_engine(database_url)
    yield StickerRepository(session_factory(engine))
    await engine.dispose()


def sighting(key: str, url: str = "https://example.com/s.png") -> Sighting:
    return Sighting("image", key, url=url)


async def test_sightings_count_and_same_bytes_merge(repo: StickerRepository) -> None:
    first = await repo.record_sighting(BOT, GROUP, sighting("image:A"), now=NOW)
    again = await repo.record_sighting(BOT, GROUP, sighting("image:A", "https://new"), now=NOW + 5)
    assert again.id == first.id and again.seen_count == 2 and again.url == "https://new"
    twin = await repo.record_sighting(BOT, GROUP, sighting("image:B"), now=NOW + 9)
    assert [s.id for s in await repo.pending(10)] == [first.id, twin.id]

    assert (
        await repo.store_bytes(first.id, sha256="ab" * 32, mime="image/png", data=b"x") == first.id
    )
    merged = await repo.store_bytes(twin.id, sha256="ab" * 32, mime="image/png", data=b"x")
    assert merged == first.id  # same bytes, other file name: one sticker, counts added
    kept = await repo.get(BOT, GROUP, first.id)
    assert kept is not None and kept.seen_count == 3
    assert await repo.get(BOT, GROUP, twin.id) is None


async def test_pool_is_per_group_and_bans_hide_stickers(repo: StickerRepository) -> None:
    mine = await repo.record_sighting(BOT, GROUP, sighting("image:A"), now=NOW)
    theirs = await repo.record_sighting(BOT, OTHER, sighting("image:A"), now=NOW)
    for sticker in (mine, theirs):
        await repo.store_bytes(sticker.id, sha256="cd" * 32, mime="image/png", data=b"png")
        await repo.mark(sticker.id, status=DESCRIBED, name="狗头", description="柴犬")
    assert [s.id for s in await repo.pool(BOT, GROUP)] == [mine.id]
    assert await repo.get(BOT, GROUP, theirs.id) is None  # another group's id is not found
    assert await repo.data_of(BOT, GROUP, theirs.id) is None
    assert await repo.description_by_hash("cd" * 32) == ("狗头", "柴犬")  # the cache by hash

    assert await repo.set_banned(BOT, GROUP, mine.id, True)
    assert await repo.pool(BOT, GROUP) == []
    assert [s.banned for s in await repo.pool(BOT, GROUP, include_banned=True)] == [True]
    assert not await repo.set_banned(BOT, GROUP, theirs.id, True)  # not this group's
    assert await repo.delete(BOT, GROUP, mine.id)
    assert await repo.count(BOT, GROUP) == 0 and await repo.count(BOT, OTHER) == 1
