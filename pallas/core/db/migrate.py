"""Apply Alembic migrations programmatically (at start-up and from the CLI), never prompting."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from alembic import command
from alembic.config import Config

log = logging.getLogger("pallas.db")

MIGRATIONS_DIR = Path(__file__).with_name("migrations")


def alembic_config(database_url: str) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.set_main_option("sqlalchemy.url", database_url.replace("%", "%%"))
    cfg.attributes["configure_logger"] = False
    return cfg


def upgrade_sync(database_url: str, revision: str = "heads") -> None:
    command.upgrade(alembic_config(database_url), revision)


async def upgrade(database_url: str, revision: str = "heads") -> None:
    """Run the upgrade in a worker thread: Alembic's async env starts its own event loop."""
    await asyncio.to_thread(upgrade_sync, database_url, revision)
    log.info("database migrated to %s", revision)
