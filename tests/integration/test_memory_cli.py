"""`pallas memory list|delete|forget-user` on each backend, as an operator runs it."""

from __future__ import annotations

import asyncio

import pytest

from pallas.cli.main import main as cli_main
from pallas.core.db import migrate
from pallas.core.db.engine import create_engine, session_factory
from pallas.features.memory.isolation import group_scope
from pallas.features.memory.records import NewMemory
from pallas.features.memory.repository import MemoryRepository

BOT, A, B = 7, 100, 200
ALICE = 20_011


def seed(url: str) -> None:
    async def run() -> None:
        await migrate.upgrade(url)
        engine = create_engine(url)
        repo = MemoryRepository(session_factory(engine))
        rows = [
            (group_scope(BOT, A), "person_facts", ALICE, "TA喜欢猫"),
            (group_scope(BOT, A), "relationship", ALICE, "叫帕拉斯小羊"),
            (group_scope(BOT, B), "person_facts", ALICE, "在学吉他"),
            (group_scope(BOT, A), "group_memory", None, "每周五开黑"),
        ]
        for scope, kind, subject, text in rows:
            await repo.upsert(
                NewMemory(BOT, scope, kind, f"k_{text}", text, text, "cli", 1.0, subject)
            )
        await engine.dispose()

    asyncio.run(run())


@pytest.fixture
def database(database_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("DATABASE_URL", database_url)
    seed(database_url)
    return database_url


def test_list_filters_by_group_kind_and_user(database: str, capsys) -> None:
    assert cli_main(["memory", "list", "--bot", str(BOT), "--group", str(A)]) == 0
    out = capsys.readouterr().out
    assert "TA喜欢猫" in out and "每周五开黑" in out and "在学吉他" not in out
    assert out.rstrip().endswith("3 item(s)")
    cli_main(["memory", "list", "--kind", "fact", "--user", str(ALICE)])
    out = capsys.readouterr().out
    assert "TA喜欢猫" in out and "在学吉他" in out and "小羊" not in out


def test_forget_user_in_one_group_then_delete_by_id(database: str, capsys) -> None:
    cli_main(["memory", "forget-user", str(ALICE), "--bot", str(BOT), "--group", str(A)])
    assert "forgot 2 item(s)" in capsys.readouterr().out
    cli_main(["memory", "list", "--user", str(ALICE)])
    out = capsys.readouterr().out
    assert "在学吉他" in out and "TA喜欢猫" not in out, "group B's fact is kept"
    assert cli_main(["memory", "delete", "mem:4"]) == 0
    assert "deleted 1 item(s): mem:4" in capsys.readouterr().out
    cli_main(["memory", "list", "--deleted"])
    out = capsys.readouterr().out
    assert "DELETED(forget_me" in out and "DELETED(cli" in out


def test_group_without_bot_is_refused(database: str) -> None:
    with pytest.raises(SystemExit):
        cli_main(["memory", "forget-user", str(ALICE), "--group", str(A)])
