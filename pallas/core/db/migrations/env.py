"""Alembic environment: async engine, schema from pallas.core.db.models.

On PostgreSQL the upgrade holds a session advisory lock (`MIGRATION_LOCK_ID`) from before it
reads `alembic_version` until it committed: several bot processes starting at once on one
database migrate one after another, and every one after the first finds the heads and does
nothing (without it, two fresh starts deadlocked on creating `alembic_version`). SQLite needs
no lock: its writers are serialised by the database file's own lock.
"""

from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy import text
from sqlalchemy.engine import Connection
from sqlalchemy.types import TypeDecorator

import pallas.core.db.models_learning  # learning branch tables (registers them on Base)
import pallas.core.db.models_memory  # memory branch tables
import pallas.core.db.models_pipeline  # pipeline_state branch tables (session variables)
import pallas.core.db.models_reminders  # reminders branch table
import pallas.core.db.models_routes  # route_history branch table (routing decisions)
import pallas.core.db.models_session  # session branch tables
import pallas.core.db.models_stickers  # noqa: F401  (stickers branch tables)
from pallas.core.db.engine import create_engine
from pallas.core.db.models import Base

config = context.config
target_metadata = Base.metadata
MIGRATION_LOCK_ID = 0x70616C6C6173  # "pallas": this database's migration lock (PostgreSQL)


def _render_item(type_: str, obj: object, autogen_context: object) -> str | bool:
    """Autogenerate writes the models' String / Text (pallas.core.db.types) as SQLAlchemy's."""
    if type_ == "type" and isinstance(obj, TypeDecorator):
        return f"sa.{obj.impl!r}"
    return False


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
        render_item=_render_item,
    )
    with context.begin_transaction():
        context.run_migrations()


async def _run_async() -> None:
    engine = create_engine(config.get_main_option("sqlalchemy.url") or "")
    try:
        async with engine.connect() as connection:
            locked = connection.dialect.name == "postgresql"
            if locked:  # waits while another process migrates; committed at once
                await connection.execute(text(f"SELECT pg_advisory_lock({MIGRATION_LOCK_ID})"))
                await connection.commit()
            try:
                await connection.run_sync(_run)
                await connection.commit()
            finally:
                if locked:
                    await connection.rollback()
                    await connection.execute(
                        text(f"SELECT pg_advisory_unlock({MIGRATION_LOCK_ID})")
                    )
                    await connection.commit()
    finally:
        await engine.dispose()


if context.is_offline_mode():
    context.configure(url=config.get_main_option("sqlalchemy.url"), target_metadata=target_metadata)
    with context.begin_transaction():
        context.run_migrations()
else:
    asyncio.run(_run_async())
