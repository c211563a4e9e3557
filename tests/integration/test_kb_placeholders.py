"""Knowledge placeholders over the real memory store: pools, modes, the per-turn cache."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest

from pallas.context.config import ContextConfig
from pallas.context.processor_inputs import ChatTurnContext
from pallas.context.prompt_overrides import PromptOverrideConfig
from pallas.core.clock import FakeClock
from pallas.core.db import migrate
from pallas.core.db.engine import create_engine, session_factory
from pallas.core.state import MemoryStateStore
from pallas.features.kb.config import KnowledgePlaceholderConfig
from pallas.features.kb.importer import chunk_text
from pallas.features.kb.lookup import KnowledgeLookup
from pallas.features.memory.config import RetrievalConfig
from pallas.features.memory.isolation import group_scope, pool_scope
from pallas.features.memory.kinds import KNOWLEDGE
from pallas.features.memory.repository import MemoryRepository
from pallas.features.memory.service import MemoryService
from pallas.turn.parts.chat_pipeline import assemble_chat_request

BOT, GROUP, OTHER = 7, 100, 200
LORE = "# 干员\n\n能天使是企鹅物流的干员，最喜欢苹果派。\n\n德克萨斯喜欢巧克力棒。\n"
RULES = "群规第一条：不许刷屏。\n\n群规第二条：周五晚上是桌游夜。\n"


@pytest.fixture
async def service(database_url: str) -> AsyncIterator[MemoryService]:
    await migrate.upgrade(database_url)
    engine = create_engine(database_url)
    clock = FakeClock()
    svc = MemoryService(MemoryRepository(session_factory(engine)), MemoryStateStore(clock), clock)
    for stem, text in (("lore", LORE), ("rules", RULES)):
        for chunk in chunk_text(text, stem):
            await svc.remember(
                bot_id=0,
                scope=pool_scope("lore"),
                kind=KNOWLEDGE,
                text=chunk.text,
                origin="kb_import",
                key=chunk.key,
            )
    await svc.remember(
        bot_id=BOT,
        scope=group_scope(BOT, OTHER),
        kind=KNOWLEDGE,
        text="别的群的秘密：苹果派配方",
        origin="admin",
    )
    yield svc
    await svc.drain()
    await engine.dispose()


def lookup(service: MemoryService, query: str, turn_index: int = 1) -> KnowledgeLookup:
    return KnowledgeLookup(
        service=service,
        config=KnowledgePlaceholderConfig(),
        memory_config=RetrievalConfig(),
        bot_id=BOT,
        group_id=GROUP,
        default_scopes=frozenset({group_scope(BOT, GROUP)}),
        query=query,
        now=1_000.0,
        turn_index=turn_index,
    )


async def prompt(
    service: MemoryService, persona: str, query: str, *, override: bool = False, **kw: object
) -> str:
    overrides = [
        PromptOverrideConfig(
            section_id="turn_policy", mode="append", text="参考：【kb::lore::1::0.1】"
        )
    ]
    ctx = ChatTurnContext(
        bot_id=BOT,
        group_id=GROUP,
        user_id=42,
        now=datetime(2026, 12, 1, tzinfo=UTC),
        current_text=query,
        persona_text=persona,
        knowledge=lookup(service, query, **kw),  # type: ignore[arg-type]
        config=ContextConfig(prompt_overrides=overrides if override else []),
    )
    request = await assemble_chat_request(ctx)
    return request.system_prompt


async def test_always_placeholder_in_persona_and_override_retrieves_from_the_pool(
    service: MemoryService,
) -> None:
    system = await prompt(
        service, "你是帕拉斯。\n【kb::lore::1::0.1】", "能天使喜欢吃什么", override=True
    )
    assert system.count("- 干员：能天使是企鹅物流的干员，最喜欢苹果派。") == 2
    assert "【kb" not in system and "秘密" not in system


async def test_gate_static_and_turn_modes(service: MemoryService) -> None:
    persona = (
        "你是帕拉斯。\n【kb::lore::1::0.1::gate::苹果|巧克力】\n【kb::lore::2::::static::rules】"
    )
    hit = await prompt(service, persona, "德克萨斯喜欢巧克力吗")
    assert "德克萨斯喜欢巧克力棒" in hit
    assert "群规第一条" in hit and "群规第二条" in hit  # static: named entries, query ignored
    miss = await prompt(service, persona, "今天好热")
    assert "德克萨斯" not in miss and "群规第一条" in miss
    every_2 = "你是帕拉斯。\n【kb::lore::1::0.1::turn::2】"
    assert "能天使" in await prompt(service, every_2, "能天使", turn_index=3)
    assert "能天使" not in await prompt(service, every_2, "能天使", turn_index=2)


async def test_bare_placeholder_reads_only_this_groups_scopes(service: MemoryService) -> None:
    system = await prompt(service, "你是帕拉斯。\n【kb】", "苹果派配方")
    assert "秘密" not in system and "【kb】" not in system


async def test_exact_text_cache_within_one_turn(service: MemoryService) -> None:
    one = lookup(service, "能天使")
    first = await one.resolve("【kb::lore::1::0.1】")
    again = await one.resolve("【kb::lore::1::0.1】")
    assert first.text == again.text and first.trace["cache"] == "miss"
    assert again.trace["cache"] == "hit"
    other = await one.resolve("【kb::lore::2::0.1】")  # different text: its own retrieval
    assert other.trace["cache"] == "miss"
    bad = await one.resolve("【kb::../etc::1】")
    assert bad.text == "" and bad.trace["error"] == "invalid_pool_name"
