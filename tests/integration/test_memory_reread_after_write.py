"""After a write, the members who asked recently have their reads made again in the background
(`pallas.features.memory.ahead`): a member who has just taught the bot something and then asks
finds the new generation's rows, indexes and profile cached, and the new fact among them. In a
burst every read on the reply's critical path waits a whole pass of the busy loop
(`benchmarks.ingest --at-facts`)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence

import pytest

from pallas.core.clock import FakeClock
from pallas.features.memory import ahead
from pallas.features.memory.profile_store import ProfileRepository
from pallas.features.memory.repository import MemoryRepository
from pallas.features.memory.service import MemoryService
from pallas.providers.encoder_slot import EncoderSlot
from pallas.providers.sentence_encoder import Matrix
from tests.integration.test_memory_embedding_model import (
    ALICE,
    BOT,
    CONFIG,
    FACTS,
    SCOPE,
    CountingEncoder,
    _ahead,
    _ask,
    _service,
    _teach,
    repo,  # noqa: F401  (the fixture)
)

READS = ("candidates", "candidates_by_kind", "subjects", "live_revisions", "vectors", "get_many")
# what only the reads of a turn (or ahead of one) make: a write's own work reads the member's
# live facts (`candidates`, the facts a new one may replace), never these
AHEAD = {"subjects", "candidates_by_kind", "live_revisions"}
NEW_FACT = "我最近在学吉他"


@pytest.fixture
def reads(repo: MemoryRepository, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:  # noqa: F811
    """The repository's reads from now on, by name."""
    seen: list[str] = []
    for name in READS:
        real = getattr(repo, name)

        def counted(*args: object, _real=real, _name=name, **kwargs: object):  # type: ignore[no-untyped-def]
            seen.append(_name)
            return _real(*args, **kwargs)

        monkeypatch.setattr(repo, name, counted)
    yield seen


async def _teach_one(svc: MemoryService, text: str = NEW_FACT) -> None:
    await svc.remember(bot_id=BOT, scope=SCOPE, kind="person_facts", text=text, origin="teach",
                       subject_user_id=ALICE)  # fmt: skip


class SlowEncoder(CountingEncoder):
    """Answers after the re-read's delay: a new fact's vector is written after it began."""

    async def encode(self, texts: Sequence[str]) -> Matrix:
        await asyncio.sleep(ahead.REWARM_DELAY_S * 3)
        return await super().encode(texts)


async def _asked_before(
    repo: MemoryRepository,  # noqa: F811
    encoder: CountingEncoder | None = None,
) -> MemoryService:
    """Alice's facts taught, and her @ anticipated once (she asked in the group)."""
    svc = _service(repo, EncoderSlot.ready(encoder or CountingEncoder("enc-a@1")),
                   ProfileRepository(repo._sessions))  # fmt: skip
    await _teach(svc)
    _ahead(svc, "我在哪个城市上班")
    await svc.drain()
    return svc


@pytest.mark.parametrize("slow", [False, True], ids=["encoder quick", "encoder slow"])
async def test_a_member_who_asked_finds_everything_read_after_they_teach(
    repo: MemoryRepository,  # noqa: F811
    reads: list[str],
    slow: bool,
) -> None:
    """Alice asked, then taught a new fact: the rows of the new generation are read again at
    once, the indexes after the fact's vector is written (also when the encoder answers after
    the re-read began). Her next question reads nothing from the database, and its window
    holds the new fact (nothing stale is served)."""
    svc = await _asked_before(repo, SlowEncoder("enc-a@1") if slow else None)
    await _teach_one(svc)
    await svc.drain()  # the write's background work: the vector, then the re-read
    assert set(reads) >= AHEAD  # read again, off the turn
    reads.clear()
    result = await _ask(svc, "我最近在学什么乐器")
    assert reads == []
    assert result.trace["loaded"] == len(FACTS) + 1 and result.trace["embeddings"] is True
    _gen, live = await svc.live_items({SCOPE}, "person_facts", ALICE, CONFIG)
    assert NEW_FACT in {i.text for i in live} and reads == []


async def test_writes_in_a_row_are_read_again_once_more_not_once_each(
    repo: MemoryRepository,  # noqa: F811
    reads: list[str],
) -> None:
    """Three facts taught one after another (an extraction's rows, a correction and what it
    retires): read back once or twice, not once each, and the last generation is cached."""
    svc = await _asked_before(repo)
    reads.clear()
    for text in ("我最近在学吉他", "我下个月搬去苏州", "我开始跑步了"):
        await _teach_one(svc, text)
    await svc.drain()
    assert 1 <= reads.count("subjects") <= 2  # read again, and once more at most
    reads.clear()
    _gen, live = await svc.live_items({SCOPE}, "person_facts", ALICE, CONFIG)
    assert reads == [] and {"我开始跑步了", "我下个月搬去苏州"} <= {i.text for i in live}


async def test_no_one_who_asked_recently_means_nothing_read_again(
    repo: MemoryRepository,  # noqa: F811
    reads: list[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A member whose last question was longer ago than `REWARM_WITHIN_S`, or a group where
    nobody asked: a write reads nothing back (the next @ reads what it needs itself)."""
    svc = await _asked_before(repo)
    clock = svc._clock
    assert isinstance(clock, FakeClock)
    clock.advance(ahead.REWARM_WITHIN_S + 1)
    reads.clear()
    await _teach_one(svc)
    await svc.drain()
    assert AHEAD.isdisjoint(reads)
    other = _service(repo, EncoderSlot.ready(CountingEncoder("enc-a@1")))
    await _teach_one(other, "我喜欢吃火锅")
    await other.drain()
    assert AHEAD.isdisjoint(reads)


async def test_without_the_local_encoder_a_write_reads_nothing_back(
    repo: MemoryRepository,  # noqa: F811
    reads: list[str],
) -> None:
    """As the reads ahead of an @, the reads after a write need the local encoder: without it
    nobody's question was anticipated and a write costs no read."""
    svc = _service(repo, EncoderSlot("off"))
    await _teach(svc)
    _ahead(svc, "我在哪个城市上班")
    await svc.drain()
    reads.clear()
    await _teach_one(svc)
    await svc.drain()
    assert AHEAD.isdisjoint(reads)
