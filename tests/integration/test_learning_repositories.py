"""Learning tables through the repositories, on a migrated database (each backend)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace

import pytest
from sqlalchemy.ext.asyncio import async_sessionmaker

from pallas.core.db import migrate
from pallas.core.db.engine import create_engine, session_factory
from pallas.features.learning.feedback_repository import FeedbackRepository
from pallas.features.learning.injection_feedback import Blame, FeedbackOutcome
from pallas.features.learning.pairs import LearningType
from pallas.features.learning.repository import CursorState, LearningRepository
from pallas.features.learning.strategies import BehaviorStrategy
from tests.unit.learning.factory import BOT, GROUP, OTHER_GROUP, T0, pair


@pytest.fixture
async def sessions(database_url: str) -> AsyncIterator[async_sessionmaker]:
    await migrate.upgrade(database_url)
    engine = create_engine(database_url)
    yield session_factory(engine)
    await engine.dispose()


async def test_pairs_are_idempotent_and_scoped_to_one_group(sessions) -> None:
    repo = LearningRepository(sessions)
    mine = [
        pair("快了", "确实", trigger_id=1, response_id=2),
        pair("热", "开空调", trigger_id=3, response_id=4),
    ]
    theirs = [pair("快了", "别家的", trigger_id=1, response_id=2, group_id=OTHER_GROUP)]
    assert await repo.add_pairs(mine + theirs, now=T0) == 3
    assert await repo.add_pairs(mine, now=T0) == 0
    assert [p.response_text for p in await repo.pairs(BOT, GROUP)] == ["确实", "开空调"]
    assert [p.response_text for p in await repo.pairs(BOT, OTHER_GROUP)] == ["别家的"]
    found = await repo.pairs_by_keys(BOT, GROUP, [(1, 2), (9, 9)])
    assert list(found) == [(1, 2)] and found[(1, 2)].response_text == "确实"
    reflection = replace(mine[0], response_id=5, learning_type=LearningType.SELF_REFLECTION)
    await repo.add_pairs([reflection], now=T0)
    assert len(await repo.pairs(BOT, GROUP)) == 2  # observed only by default
    counts = await repo.counts(BOT, GROUP)
    assert (counts.observed_pairs, counts.reflection_pairs) == (2, 1)


async def test_strategies_are_replaced_per_group(sessions) -> None:
    repo = LearningRepository(sessions)

    def strategy(situation: str, group: int = GROUP) -> BehaviorStrategy:
        return BehaviorStrategy(situation, "接一句", "", LearningType.OBSERVED, 2, 2.0, BOT, group)

    await repo.replace_strategies(BOT, GROUP, [strategy("甲"), strategy("乙")], now=T0)
    await repo.replace_strategies(BOT, OTHER_GROUP, [strategy("丙", OTHER_GROUP)], now=T0)
    await repo.replace_strategies(BOT, GROUP, [strategy("丁")], now=T0 + 1)
    assert [s.situation for s in await repo.strategies(BOT, GROUP)] == ["丁"]
    assert [s.situation for s in await repo.strategies(BOT, OTHER_GROUP)] == ["丙"]


async def test_cursor_and_sweep_position_round_trip(sessions) -> None:
    repo = LearningRepository(sessions)
    assert await repo.cursor(BOT, GROUP) == CursorState(BOT, GROUP)
    assert await repo.sweep_position() is None
    state = CursorState(BOT, GROUP, last_row_id=42).with_spend("2026-11-30", 1, 900)
    await repo.save_cursor(state)
    await repo.save_cursor(replace(state, last_row_id=50))
    loaded = await repo.cursor(BOT, GROUP)
    assert loaded.last_row_id == 50 and loaded.spent_on("2026-11-30") == (1, 900)
    assert loaded.spent_on("2026-12-01") == (0, 0)
    await repo.save_sweep_position((BOT, GROUP), now=T0)
    assert await repo.sweep_position() == (BOT, GROUP)


async def test_feedback_is_one_row_per_key_and_undo_sticks(sessions) -> None:
    repo = FeedbackRepository(sessions)
    outcome = FeedbackOutcome(
        BOT, GROUP, 77, 10001, T0, "不可以", (Blame("expression", "pair:x", -3.0, "确实"),), "好"
    )
    first = await repo.save(outcome, turn_id="t1")
    again = await repo.save(replace(outcome, created_at=T0 + 5), turn_id="t1")
    assert first.id == again.id
    assert len(await repo.for_group(BOT, GROUP)) == 1
    assert again.outcome.blames == outcome.blames
    await repo.set_undone(first.id, T0 + 9)
    stored = await repo.by_key(outcome.key)
    assert stored is not None and stored.outcome.undone_at == T0 + 9
    assert await repo.by_id(BOT, OTHER_GROUP, first.id) is None  # never across groups
