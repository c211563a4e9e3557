"""`pallas kb import` behind a running bot: with a shared state store (`PALLAS_STATE_URL`) the
bot's next turn reads the new pool rows (the import bumps the pool's generation where the bot
reads it); on the in-process store the command says when they will be read."""

from __future__ import annotations

import argparse
import uuid
from pathlib import Path

import pytest

from pallas.cli.kb_cli import _store
from pallas.core.clock import SystemClock
from pallas.core.db import migrate
from pallas.core.db.engine import create_engine, session_factory
from pallas.core.state_redis import RedisStateStore
from pallas.features.kb import chunk_folder
from pallas.features.memory import KNOWLEDGE, MemoryRepository, MemoryService, pool_scope
from pallas.features.memory.config import RetrievalConfig
from tests.harness.redis_server import RedisServer

POOL = "lore"
QUESTION = "源石是什么"


def _args() -> argparse.Namespace:
    return argparse.Namespace(pool=POOL, bot=0)


async def _ask(bot: MemoryService) -> list[str]:
    result = await bot.retrieve(
        KNOWLEDGE, QUESTION, scopes={pool_scope(POOL)}, config=RetrievalConfig(),
        now=SystemClock().now(), bot_id=7, group_id=1,
    )  # fmt: skip
    return [i.text for i in result.items]


@pytest.fixture
def lore(tmp_path: Path) -> Path:
    folder = tmp_path / "lore"
    folder.mkdir()
    (folder / "origin.md").write_text("源石是一种能量矿物，也会带来矿石病。", "utf-8")
    return folder


async def test_a_running_bot_on_shared_state_reads_an_import_at_once(
    tmp_path: Path, lore: Path, redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'pallas.db'}"
    prefix = f"kb{uuid.uuid4().hex[:8]}"
    for name, value in {"DATABASE_URL": url, "PALLAS_STATE_URL": redis_server.url,
                        "PALLAS_STATE_PREFIX": prefix}.items():  # fmt: skip
        monkeypatch.setenv(name, value)
    await migrate.upgrade(url)
    engine = create_engine(url)
    state = RedisStateStore.from_url(redis_server.url, prefix=prefix, connect_timeout=5.0)
    bot = MemoryService(MemoryRepository(session_factory(engine)), state, SystemClock())
    try:
        assert await _ask(bot) == []  # the bot has answered: its cache holds "nothing"
        chunks = chunk_folder(lore)
        assert await _store(_args(), pool_scope(POOL), chunks) == 0
        assert await _ask(bot) == ["源石是一种能量矿物，也会带来矿石病。"]
    finally:
        await state.aclose()
        await engine.dispose()


async def test_on_the_in_process_store_the_command_says_when(
    tmp_path: Path, lore: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DATABASE_URL", f"sqlite+aiosqlite:///{tmp_path / 'pallas.db'}")
    monkeypatch.delenv("PALLAS_STATE_URL", raising=False)
    assert await _store(_args(), pool_scope(POOL), chunk_folder(lore)) == 0
    out = capsys.readouterr().out
    assert "pool lore: 1 chunk(s) from 1 file(s): 1 added" in out
    assert "within 5 minutes" in out and "restart" in out
