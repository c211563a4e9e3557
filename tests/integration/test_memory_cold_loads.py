"""The cold first turn's memory reads (each backend): the group's shared kinds in one statement
and "nothing stored about this member" without a query, both equal to the per-kind reads.

`MemoryRepository.candidates_by_kind` against `candidates` per kind (same rows, same order, ties
on recency included), `subjects` against the rows, and `MemoryService.retrieve` with these
shortcuts against a service whose repository answers every read with the per-kind query. A
scope set never sees another group's rows or members.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from typing import Any

import pytest

from pallas.core.clock import FakeClock
from pallas.core.db import migrate
from pallas.core.db.engine import create_engine, session_factory
from pallas.core.state import MemoryStateStore
from pallas.features.memory.config import RetrievalConfig
from pallas.features.memory.isolation import group_scope, pool_scope
from pallas.features.memory.kinds import PERSON_FACTS, PERSONAL_KINDS, RELATIONSHIP
from pallas.features.memory.records import NewMemory
from pallas.features.memory.repository import MemoryRepository
from pallas.features.memory.service import MemoryService
from pallas.features.memory.windows import SHARED_KINDS

BOT = 7
A, B = 300, 400
NOW = 1_780_000_000.0
SCOPES_A = frozenset({group_scope(BOT, A), pool_scope("shared")})
SCOPES_B = frozenset({group_scope(BOT, B)})
KINDS = (*SHARED_KINDS, RELATIONSHIP, PERSON_FACTS)


@pytest.fixture
async def repo(database_url: str) -> AsyncIterator[MemoryRepository]:
    await migrate.upgrade(database_url)
    engine = create_engine(database_url)
    yield MemoryRepository(session_factory(engine))
    await engine.dispose()


async def _fill(repo: MemoryRepository, seed: int, n: int) -> None:
    """Rows over two groups and a pool, every kind, members 1-5, equal times, some deleted and
    some touched (recency = last access or update)."""
    rng = random.Random(seed)
    scopes = (group_scope(BOT, A), group_scope(BOT, B), pool_scope("shared"))
    ids = []
    for i in range(n):
        kind = rng.choice(KINDS)
        personal = kind in PERSONAL_KINDS and rng.random() < 0.8
        outcome = await repo.upsert(
            NewMemory(
                bot_id=BOT,
                scope=rng.choice(scopes),
                kind=kind,
                key=f"k{i}",
                fingerprint=f"第{i}条",
                text=f"第{i}条 记忆 {rng.choice(['猫', '狗', '番剧', '游戏'])}",
                origin="extract",
                now=NOW + i // 4,  # four rows share each second
                subject_user_id=rng.randrange(1, 6) if personal else None,
            )
        )
        ids.append(outcome.item.id)
    await repo.touch(rng.sample(ids, n // 5), NOW + 10)
    await repo.soft_delete(rng.sample(ids, n // 6), now=NOW + 20, reason="test", scopes=None)


@pytest.mark.parametrize("seed", [1, 2])
async def test_shared_kinds_in_one_statement_equal_the_per_kind_reads(
    repo: MemoryRepository, seed: int
) -> None:
    await _fill(repo, seed, 160)
    for scopes in (SCOPES_A, SCOPES_B):
        for cap in (1, 3, 500):
            folded = await repo.candidates_by_kind(scopes, SHARED_KINDS, limit=cap)
            assert list(folded) == list(SHARED_KINDS)
            for kind in SHARED_KINDS:
                assert folded[kind] == await repo.candidates(scopes, kind, limit=cap), (kind, cap)


async def test_subjects_are_the_members_with_live_personal_rows(repo: MemoryRepository) -> None:
    await _fill(repo, 3, 160)
    for scopes in (SCOPES_A, SCOPES_B):
        want = set()
        for kind in PERSONAL_KINDS:
            for subject in range(1, 6):
                if await repo.candidates(scopes, kind, subject_user_id=subject):
                    want.add(subject)
        assert await repo.subjects(scopes, PERSONAL_KINDS) == want


class _PerKindRepo:
    """The repository as it answered before: every read one per-kind query (counted)."""

    def __init__(self, repo: MemoryRepository, *, per_kind_only: bool) -> None:
        self._repo = repo
        self.per_kind_only = per_kind_only
        self.reads: list[str] = []

    async def candidates(self, *args: Any, **kwargs: Any) -> Any:
        self.reads.append("candidates")
        return await self._repo.candidates(*args, **kwargs)

    async def candidates_by_kind(self, scopes: Any, kinds: Any, *, limit: int) -> Any:
        self.reads.append("candidates_by_kind")
        if self.per_kind_only:
            return {k: await self._repo.candidates(scopes, k, limit=limit) for k in kinds}
        return await self._repo.candidates_by_kind(scopes, kinds, limit=limit)

    async def subjects(self, *args: Any) -> Any:
        self.reads.append("subjects")
        return await self._repo.subjects(*args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._repo, name)


def _service(repo: Any) -> MemoryService:
    clock = FakeClock(NOW + 100)
    return MemoryService(repo, MemoryStateStore(clock), clock)


async def _turn(service: MemoryService, group: int, scopes: frozenset[str], user: int) -> list:
    """The seven reads of one reply turn, side by side as the sources make them."""
    config = RetrievalConfig()

    def read(kind: str, subject: int | None) -> Any:
        return service.retrieve(
            kind,
            "猫 番剧",
            scopes=scopes,
            config=config,
            now=NOW + 100,
            bot_id=BOT,
            group_id=group,
            subject_user_id=subject,
            fallback_k=2 if subject else 0,
        )

    reads = [read(k, None) for k in SHARED_KINDS]
    reads += [read(RELATIONSHIP, user), read(PERSON_FACTS, user)]
    return [(r.kind, r.items) for r in await asyncio.gather(*reads)]


async def test_a_cold_turn_reads_the_same_rows_with_fewer_queries(repo: MemoryRepository) -> None:
    await _fill(repo, 4, 200)
    fast_repo = _PerKindRepo(repo, per_kind_only=False)
    fast, plain = _service(fast_repo), _service(_PerKindRepo(repo, per_kind_only=True))
    for group, scopes in ((A, SCOPES_A), (B, SCOPES_B)):
        for user in (1, 2, 99, 98):  # 98, 99: members nothing is stored about
            assert await _turn(fast, group, scopes, user) == await _turn(plain, group, scopes, user)
    fast_repo.reads.clear()
    await _turn(fast, A, SCOPES_A, 97)  # a new member in a warm group: no query at all
    assert fast_repo.reads == []
    # a row about the new member is seen on the next turn (the write moves the generation)
    await fast.remember(
        bot_id=BOT,
        scope=group_scope(BOT, A),
        kind=PERSON_FACTS,
        text="喜欢猫",
        origin="teach",
        subject_user_id=97,
    )
    rows = dict(await _turn(fast, A, SCOPES_A, 97))
    assert [i.text for i in rows[PERSON_FACTS]] == ["喜欢猫"]
    rows_b = dict(await _turn(fast, B, SCOPES_B, 97))  # another group never sees it
    assert rows_b[PERSON_FACTS] == ()


async def test_the_sources_of_one_cold_turn_share_one_shared_kinds_read(
    repo: MemoryRepository,
) -> None:
    await _fill(repo, 5, 60)
    counting = _PerKindRepo(repo, per_kind_only=False)
    await _turn(_service(counting), A, SCOPES_A, 1)
    assert counting.reads.count("candidates_by_kind") == 1
    assert counting.reads.count("subjects") == 1
