"""Whether the database's schema is the one this release expects (the 状态 page and
`/pallas status`).

Start-up migrates the database to the heads and refuses one a newer release migrated. While
the bot runs, another process of the deployment — a newer release, in a rolling upgrade — may
migrate it further: `schema_verdict` (pure) compares the database's `alembic_version` rows
with this release's migration files and says so in Chinese, with what to do.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from pallas.core.db.migrate import script_heads, script_revisions


@dataclass(frozen=True, slots=True)
class SchemaState:
    ok: bool
    database: tuple[str, ...]  # the database's revisions
    heads: tuple[str, ...]  # this release's heads
    line_zh: str
    action_zh: str = ""  # what to do when not ok


def schema_verdict(
    database: Collection[str], heads: Collection[str], known: Collection[str]
) -> SchemaState:
    db, expected = tuple(sorted(database)), tuple(sorted(heads))
    if db == expected:
        newest = max(db) if db else "（空）"
        line = f"数据库迁移版本 {newest}（共 {len(db)} 个分支，与本版本一致）"
        return SchemaState(True, db, expected, line)
    unknown = [r for r in db if r not in known]
    if unknown:
        return SchemaState(
            False,
            db,
            expected,
            f"数据库已被更新的版本迁移（{'、'.join(unknown)}），这个进程运行的是旧版本",
            "把这个进程也升级到同一版本后重启；要退回旧版本，先停机，再用 pallas restore "
            "恢复升级前的备份（docs/operations.md 的「升级」）",
        )
    return SchemaState(
        False,
        db,
        expected,
        f"数据库还差本版本的迁移 {'、'.join(r for r in expected if r not in db)}",
        "重启机器人：启动时会自动迁移（或运行 pallas db upgrade）",
    )


async def schema_state(sessions: async_sessionmaker[AsyncSession]) -> SchemaState:
    async with sessions() as session:
        rows = (await session.execute(text("SELECT version_num FROM alembic_version"))).all()
    heads = script_heads() or frozenset()
    return schema_verdict({str(r[0]) for r in rows}, heads, script_revisions())


__all__ = ["SchemaState", "schema_state", "schema_verdict"]
