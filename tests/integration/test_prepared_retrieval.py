"""Knowledge and person facts over turns (each backend): the kept indexes score what the
database holds now.

`MemoryService.retrieve` keeps each loaded candidate tuple's scope filter and index
(`ScopedCache`), and each index keeps the BM25 shares of the query terms it has seen. Turn after
turn, with writes in between — knowledge imported, a knowledge row edited (same key, new text),
a fact added about a member, a recall touching rows — every retrieval must choose and score
exactly what the reference scoring (every candidate scored afresh, `reference_scoring`) gives
over the rows the repository returns at that moment.
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator

import pytest

from pallas.core.clock import FakeClock
from pallas.core.db import migrate
from pallas.core.db.engine import create_engine, session_factory
from pallas.core.state import MemoryStateStore
from pallas.features.memory.config import RetrievalConfig
from pallas.features.memory.isolation import group_scope
from pallas.features.memory.items import to_candidate
from pallas.features.memory.kinds import KNOWLEDGE, PERSON_FACTS
from pallas.features.memory.repository import MemoryRepository
from pallas.features.memory.service import BlockResult, MemoryService
from tests.unit.memory.reference_scoring import reference_retrieve, scoring_only

BOT, GROUP = 7, 300
SCOPES = frozenset({group_scope(BOT, GROUP)})
NOW = 1_780_000_000.0
ALICE, BOB = 11, 12
FACTS = ["喜欢", "讨厌", "在玩", "养了", "住在", "最近在学", "周末常去", "想买"]
THINGS = ["猫", "明日方舟", "火锅", "吉他", "上海", "日语", "爬山", "机械键盘", "咖啡", "原神"]
QUERIES = [
    "帕拉斯，今天吃什么，猫呢（41）？",
    "有人打活动吗，明日方舟呢",
    "周末去哪玩，上海的咖啡",
    "我有什么东西不能吃",
    "吉他F和弦",
    "哈哈哈哈",
]


@pytest.fixture
async def service(database_url: str) -> AsyncIterator[MemoryService]:
    await migrate.upgrade(database_url)
    engine = create_engine(database_url)
    clock = FakeClock(NOW)
    yield MemoryService(MemoryRepository(session_factory(engine)), MemoryStateStore(clock), clock)
    await engine.dispose()


async def _fill(service: MemoryService, n: int) -> None:
    rng = random.Random(5)
    for i in range(n):
        user = (ALICE, BOB)[i % 2]
        personal = i % 3 == 0
        await service.remember(
            bot_id=BOT,
            scope=group_scope(BOT, GROUP),
            kind=PERSON_FACTS if personal else KNOWLEDGE,
            text=f"群友{user}{rng.choice(FACTS)}{rng.choice(THINGS)}（记录{i}）",
            origin="extracted",
            key=f"k{i}",
            subject_user_id=user if personal else None,
        )


async def _checked(
    service: MemoryService, kind: str, query: str, now: float, subject: int | None = None
) -> BlockResult:
    """One retrieval, compared with the reference over the rows stored now. The reference
    scores; it does not veto (the person-facts vetoes have tests of their own), so they are
    off here — "明日方舟" asked, "原神" told is another game's fact."""
    config = scoring_only(RetrievalConfig())
    got = await service.retrieve(
        kind,
        query,
        scopes=SCOPES,
        config=config,
        now=now,
        bot_id=BOT,
        group_id=GROUP,
        subject_user_id=subject,
    )
    rows = await service.repo.candidates(
        SCOPES, kind, subject_user_id=subject, limit=config.candidate_cap
    )
    want = reference_retrieve(
        query,
        [to_candidate(r) for r in rows],
        kind=kind,
        now=now,
        allowed_scopes=SCOPES,
        config=config,
    )
    assert [i.ref for i in got.items] == list(want.ids)
    scored = {c["id"]: c for c in got.trace["candidates"]}
    for cand in want.trace.candidates:  # every candidate shown: the same rounded scores
        if cand.id in scored:
            assert scored[cand.id]["score"] == round(cand.score, 4)
            assert scored[cand.id]["sim"] == round(cand.similarity, 4)
            assert scored[cand.id]["recency"] == round(cand.recency, 4)
    assert got.trace["dropped_by_threshold"] == list(want.trace.dropped_by_threshold[:20])
    assert got.trace["dropped_by_top_k"] == list(want.trace.dropped_by_top_k[:20])
    return got


async def _turn(service: MemoryService, query: str, now: float) -> tuple[BlockResult, ...]:
    return (
        await _checked(service, KNOWLEDGE, query, now),
        await _checked(service, PERSON_FACTS, query, now, ALICE),
        await _checked(service, PERSON_FACTS, query, now, BOB),
    )


async def test_kept_indexes_follow_every_write(service: MemoryService) -> None:
    await _fill(service, 120)
    now = NOW
    for query in QUERIES:  # the same loaded rows over several turns: indexes kept
        now += 7.0
        await _turn(service, query, now)

    # knowledge imported: a new row is found on the next turn
    await service.remember(
        bot_id=BOT, scope=group_scope(BOT, GROUP), kind=KNOWLEDGE,
        text="罗德岛的晚饭是炒饭和味噌汤", origin="import", key="kb_dinner",
    )  # fmt: skip
    knowledge, _, _ = await _turn(service, "罗德岛的晚饭有味噌汤吗", now + 10)
    assert "罗德岛的晚饭是炒饭和味噌汤" in [i.text for i in knowledge.items]

    # the same knowledge row edited (same key, new text): the old text is gone
    await service.remember(
        bot_id=BOT, scope=group_scope(BOT, GROUP), kind=KNOWLEDGE,
        text="罗德岛的晚饭改成了咖喱饭和味噌汤", origin="import", key="kb_dinner",
    )  # fmt: skip
    knowledge, _, _ = await _turn(service, "罗德岛的晚饭还有味噌汤吗", now + 20)
    texts = [i.text for i in knowledge.items]
    assert "罗德岛的晚饭改成了咖喱饭和味噌汤" in texts and "罗德岛的晚饭是炒饭和味噌汤" not in texts

    # a fact about Alice: hers on the next turn, never Bob's
    await service.remember(
        bot_id=BOT, scope=group_scope(BOT, GROUP), kind=PERSON_FACTS,
        text="群友11对花生过敏", origin="extracted", key="allergy", subject_user_id=ALICE,
    )  # fmt: skip
    _, alice, bob = await _turn(service, "花生过敏的人不能吃什么", now + 30)
    assert "群友11对花生过敏" in [i.text for i in alice.items]
    assert "群友11对花生过敏" not in [i.text for i in bob.items]

    # recalls touch rows (access counts, last access): scores follow them once stored
    service.touch([i.id for i in alice.items])
    await service.flush_touches()
    await service.invalidate(SCOPES)
    for query in QUERIES[:3]:
        await _turn(service, query + "！", now + 40)
