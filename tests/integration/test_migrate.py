"""Start-up migration: a SQLite database already at the heads is recognised without Alembic;
one that is not (new, older, another backend, files in another form) is upgraded by Alembic."""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
from pathlib import Path

import pytest
from alembic import command
from alembic.script import ScriptDirectory

from pallas.core.db import migrate


def _url(path: Path) -> str:
    return f"sqlite+aiosqlite:///{path}"


def _versions(path: Path) -> set[str]:
    with sqlite3.connect(path) as db:
        rows = {r[0] for r in db.execute("SELECT version_num FROM alembic_version")}
    db.close()
    return rows


def test_script_heads_are_alembics_heads() -> None:
    """The plain reading of the migration files names the heads Alembic computes."""
    script = ScriptDirectory.from_config(migrate.alembic_config("sqlite://"))
    assert migrate.script_heads() == frozenset(script.get_heads())


async def test_a_database_at_the_heads_is_left_alone(tmp_path: Path) -> None:
    db = tmp_path / "pallas.db"
    assert not migrate.at_heads(_url(db))  # no file yet: Alembic creates it
    await migrate.upgrade(_url(db))
    assert migrate.at_heads(_url(db))
    assert _versions(db) == set(migrate.script_heads() or ())
    assert await asyncio.to_thread(migrate.upgrade_sync, _url(db)) is False  # nothing to do


async def test_an_older_database_is_upgraded(tmp_path: Path) -> None:
    db = tmp_path / "pallas.db"
    await asyncio.to_thread(command.upgrade, migrate.alembic_config(_url(db)), "0002")
    assert _versions(db) == {"0002"}
    assert not migrate.at_heads(_url(db))
    assert await asyncio.to_thread(migrate.upgrade_sync, _url(db)) is True
    assert migrate.at_heads(_url(db))


@pytest.mark.parametrize(
    "url",
    [
        "sqlite+aiosqlite:///:memory:",
        "postgresql+asyncpg://pallas@localhost/pallas",  # another backend: Alembic decides
    ],
)
def test_other_databases_are_left_to_alembic(url: str) -> None:
    assert not migrate.at_heads(url)


def test_a_file_in_another_form_leaves_the_decision_to_alembic(tmp_path: Path) -> None:
    versions = tmp_path / "versions"
    shutil.copytree(migrate.MIGRATIONS_DIR / "versions", versions)
    assert migrate.script_heads(versions) == migrate.script_heads()
    merge = 'revision: str = "0012_merge"\ndown_revision = ("0003_memory", "0004_learning")\n'
    (versions / "0012_merge.py").write_text(merge, encoding="utf-8")
    assert migrate.script_heads(versions) is None


def test_a_database_without_a_version_table_is_not_at_the_heads(tmp_path: Path) -> None:
    db = tmp_path / "other.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE t (x)")
    conn.close()
    assert not migrate.at_heads(_url(db))
