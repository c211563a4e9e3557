"""The question adapter reaches the person facts' cosines only (issue #47): with an adapter for
the active encoder, a member's facts are scored `q · row + offset` (clipped), with the stored
vectors untouched; another kind, a block with `question_adapter` off, or another model's
vectors keep the plain cosine."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping

import numpy as np
import pytest

from pallas.core.clock import FakeClock
from pallas.core.db import migrate
from pallas.core.db.engine import create_engine, session_factory
from pallas.core.state import MemoryStateStore
from pallas.features.memory.config import RetrievalConfig
from pallas.features.memory.embeddings import MemoryEmbeddings
from pallas.features.memory.isolation import group_scope
from pallas.features.memory.repository import MemoryRepository
from pallas.features.memory.service import MemoryService
from pallas.providers.encoder_slot import EncoderSlot
from pallas.providers.sentence_encoder import HashingEncoder
from pallas.ranking import QuestionAdapter

BOT, GROUP, ALICE = 7, 300, 11
SCOPE = group_scope(BOT, GROUP)
NOW = 1_780_000_000.0
FACTS = ["我养了一只橘猫叫胖虎", "我在杭州上班", "我周末常去爬山", "我不吃香菜", "我在学日语"]
QUESTION = "我在哪个城市上班"
MODEL = "enc-a@1"
# halves every cosine and adds 0.3: a plain cosine c becomes 0.5·c + 0.3
HALF = QuestionAdapter(MODEL, np.full(64, 0.5, dtype=np.float32), 0.3)
CONFIG = RetrievalConfig(concept_weight=0.0, personal_fallback_k=0)


@pytest.fixture
async def repo(database_url: str) -> AsyncIterator[MemoryRepository]:
    await migrate.upgrade(database_url)
    engine = create_engine(database_url)
    yield MemoryRepository(session_factory(engine))
    await engine.dispose()


def service(repo: MemoryRepository, adapters: Mapping[str, QuestionAdapter],
            model: str = MODEL) -> MemoryService:  # fmt: skip
    clock = FakeClock(NOW)
    state = MemoryStateStore(clock)
    slot = EncoderSlot.ready(HashingEncoder(dim=64, model_id=model))
    vectors = MemoryEmbeddings(repo, state, clock, encoder=slot, adapters=adapters)
    return MemoryService(repo, state, clock, embeddings=vectors)


async def cosines(
    svc: MemoryService,
    kind: str,
    config: RetrievalConfig = CONFIG,
    subject: int | None = ALICE,
    adapted: bool = False,
) -> dict[str, float]:
    for fact in FACTS:
        await svc.remember(bot_id=BOT, scope=SCOPE, kind=kind, text=fact, origin="teach",
                           subject_user_id=subject)  # fmt: skip
    await svc.drain()
    result = await svc.retrieve(kind, QUESTION, scopes={SCOPE}, config=config, now=NOW,
                                bot_id=BOT, group_id=GROUP, subject_user_id=subject)  # fmt: skip
    await svc.drain()
    # the trace says whether the question was reweighted (the console's 检索来源 line)
    assert result.trace["question_adapter"] is adapted
    return {c["id"]: c["embedding"] for c in result.trace["candidates"] if c["embedding"]}


def affine(plain: dict[str, float]) -> dict[str, float]:
    return {ref: min(1.0, max(0.0, 0.5 * c + 0.3)) for ref, c in plain.items()}


async def test_person_facts_are_scored_by_the_adapted_question(repo: MemoryRepository) -> None:
    plain = await cosines(service(repo, {}), "person_facts")
    assert plain, "the hashing encoder gives the taught facts a cosine"
    adapted = await cosines(service(repo, {MODEL: HALF}), "person_facts", adapted=True)
    assert set(adapted) >= set(plain)
    for ref, cosine in affine(plain).items():
        assert adapted[ref] == pytest.approx(cosine, abs=1e-3)


async def test_other_kinds_and_other_models_keep_the_plain_cosine(repo: MemoryRepository) -> None:
    plain = await cosines(service(repo, {}), "group_memory", subject=None)
    assert plain
    assert await cosines(service(repo, {MODEL: HALF}), "group_memory", subject=None) == plain
    other = service(repo, {"enc-b@2": HALF}, model=MODEL)  # an adapter for another model
    assert await cosines(other, "group_memory", subject=None) == plain


async def test_a_block_with_the_adapter_off_keeps_the_plain_cosine(repo: MemoryRepository) -> None:
    off = CONFIG.model_copy(
        update={"person_facts": CONFIG.person_facts.model_copy(update={"question_adapter": False})}
    )
    plain = await cosines(service(repo, {}), "person_facts", off)
    assert await cosines(service(repo, {MODEL: HALF}), "person_facts", off) == plain
