"""Cost of the issue-12 processors: session variables, knowledge placeholders, attachments.

Prints the assemble time of one REPLY request (the whole pipeline: sections, messages,
budget, formatter) with the new processors inert (nothing declared) and active (5 variables
with `$[svars::table]`, two kb placeholders resolved from a 400-chunk pool in a real SQLite
store, a 3,000-character attached file), and the placeholder lookup alone (cold, then the
per-turn exact-text cache).

    python -m benchmarks pipeline_state
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from benchmarks.stats import describe
from pallas.context.processor_inputs import ChatTurnContext
from pallas.core.clock import FakeClock
from pallas.core.db import migrate
from pallas.core.db.engine import create_engine, session_factory
from pallas.core.state import MemoryStateStore
from pallas.features.attachments.files import AttachmentText
from pallas.features.kb.config import KnowledgePlaceholderConfig
from pallas.features.kb.lookup import KnowledgeLookup
from pallas.features.memory.config import RetrievalConfig
from pallas.features.memory.isolation import group_scope, pool_scope
from pallas.features.memory.kinds import KNOWLEDGE
from pallas.features.memory.repository import MemoryRepository
from pallas.features.memory.service import MemoryService
from pallas.features.svars.config import SvarConfig, SvarDef
from pallas.features.svars.render import SvarView
from pallas.turn.parts.chat_pipeline import assemble_chat_request

ROUNDS = 200
TOPICS = [
    "苹果派",
    "移动城市",
    "源石",
    "企鹅物流",
    "龙门",
    "桌游夜",
    "骰子",
    "干员",
    "任务",
    "天灾",
]
PERSONA = (
    "你是帕拉斯。\n【kb::lore::3::0.1】\n【kb::lore::2::0.1::gate::苹果|龙门】\n$[svars::table]"
)


async def _pool(service: MemoryService, size: int) -> None:
    for i in range(size):
        topic = TOPICS[i % len(TOPICS)]
        text = f"设定第{i}条：{topic}相关的记载，编号{i}，出现在第{i // 10}章。"
        await service.remember(
            bot_id=0,
            scope=pool_scope("lore"),
            kind=KNOWLEDGE,
            text=text,
            origin="bench",
            key=f"lore_{i}",
        )


def _ctx(active: bool, lookup: KnowledgeLookup | None) -> ChatTurnContext:
    svars = SvarConfig(
        variables=[SvarDef(name=f"v{i}", default=i, min=0, max=100) for i in range(5)]
    )
    extra = {}
    if active:
        extra = {
            "svars": SvarView(svars, {(0, "v1"): 42}, 42),
            "knowledge": lookup,
            "attachments": (AttachmentText("file", "notes.txt", "会议纪要。" * 600, "read"),),
        }
    return ChatTurnContext(
        bot_id=1,
        group_id=500,
        user_id=42,
        now=datetime(2026, 12, 1, tzinfo=UTC),
        current_text="龙门的苹果派好吃吗",
        persona_text=PERSONA if active else "你是帕拉斯。",
        **extra,  # type: ignore[arg-type]
    )


async def _run() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite+aiosqlite:///{Path(tmp) / 'bench.db'}"
        await migrate.upgrade(url)
        engine = create_engine(url)
        clock = FakeClock()
        service = MemoryService(
            MemoryRepository(session_factory(engine)), MemoryStateStore(clock), clock
        )
        await _pool(service, 400)

        def lookup() -> KnowledgeLookup:
            return KnowledgeLookup(
                service,
                KnowledgePlaceholderConfig(),
                RetrievalConfig(),
                1,
                500,
                frozenset({group_scope(1, 500)}),
                "龙门的苹果派好吃吗",
                clock.now(),
                1,
            )

        cold, cached = [], []
        for i in range(ROUNDS):
            look = lookup()
            look.query = f"龙门的苹果派好吃吗 {i}"  # a new query each turn: no service cache hit
            t0 = time.perf_counter()
            await look.resolve("【kb::lore::3::0.1】")
            t1 = time.perf_counter()
            await look.resolve("【kb::lore::3::0.1】")
            cold.append((t1 - t0) * 1000)
            cached.append((time.perf_counter() - t1) * 1000)
        print(describe("kb placeholder (cold)", cold))
        print(describe("kb placeholder (same turn)", cached))

        for label, active in (
            ("pipeline, processors inert", False),
            ("pipeline, all active", True),
        ):
            times, tokens = [], 0
            for _ in range(ROUNDS):
                ctx = _ctx(active, lookup())
                t0 = time.perf_counter()
                request = await assemble_chat_request(ctx)
                times.append((time.perf_counter() - t0) * 1000)
                tokens = request.budget_report.tokens_after if request.budget_report else 0
            print(describe(label, times) + f" request_tokens={tokens}")
        await service.drain()
        await engine.dispose()


def main() -> None:
    asyncio.run(_run())


if __name__ == "__main__":
    main()
