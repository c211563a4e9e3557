"""Apply Alembic migrations programmatically (at start-up and from the CLI), never prompting.

A restart usually finds the database already at the heads. For SQLite, `at_heads` checks that
without Alembic — the `alembic_version` rows against the heads named by the migration files —
and only a database that needs an upgrade (or any other backend, or anything unexpected in the
files) loads Alembic: importing it and setting up its environment cost ~0.2 s of start-up.
"""

from __future__ import annotations

import asyncio
import logging
import re
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy.engine import make_url

from pallas.core.errors import StorageError

if TYPE_CHECKING:
    from alembic.config import Config

log = logging.getLogger("pallas.db")

MIGRATIONS_DIR = Path(__file__).with_name("migrations")
_REVISION = re.compile(r'^revision: str = "([^"]+)"$', re.MULTILINE)
_DOWN_REVISION = re.compile(r'^down_revision: str \| None = (?:"([^"]+)"|None)$', re.MULTILINE)


def alembic_config(database_url: str) -> Config:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.set_main_option("sqlalchemy.url", database_url.replace("%", "%%"))
    cfg.attributes["configure_logger"] = False
    return cfg


def script_heads(versions: Path = MIGRATIONS_DIR / "versions") -> frozenset[str] | None:
    """The heads of the migration files (revisions no other file builds on); None when a file
    is not in the plain one-parent form this reads (Alembic then decides)."""
    revisions: set[str] = set()
    parents: set[str] = set()
    for path in versions.glob("*.py"):
        if path.name == "__init__.py":
            continue
        text = path.read_text(encoding="utf-8")
        revision, down = _REVISION.findall(text), _DOWN_REVISION.findall(text)
        if len(revision) != 1 or len(down) != 1:
            return None
        revisions.add(revision[0])
        if down[0]:
            parents.add(down[0])
    return frozenset(revisions - parents) or None


def script_revisions(versions: Path = MIGRATIONS_DIR / "versions") -> frozenset[str]:
    """Every revision the migration files name (what this release knows)."""
    found: set[str] = set()
    for path in versions.glob("*.py"):
        found.update(_REVISION.findall(path.read_text(encoding="utf-8")))
    return frozenset(found)


def at_heads(database_url: str) -> bool:
    """Whether a SQLite database already stands at the migration files' heads (False when in
    doubt: another backend, no file yet, no version table, files in another form)."""
    url = make_url(database_url)
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:":
        return False
    path = Path(url.database)
    heads = script_heads()
    if heads is None or not path.is_file():
        return False
    try:
        with closing(sqlite3.connect(path, timeout=5)) as db:
            rows = db.execute("SELECT version_num FROM alembic_version").fetchall()
    except sqlite3.Error:
        return False
    return {str(r[0]) for r in rows} == heads


class UnknownRevisionError(StorageError):
    """The database stands at a revision these migration files do not know: it was migrated
    by a newer Pallas. Start-up stops rather than guess."""


def upgrade_sync(database_url: str, revision: str = "heads") -> bool:
    """Upgrade to `revision`; False when the database already stood at the heads."""
    if revision == "heads" and at_heads(database_url):
        return False
    from alembic import command
    from alembic.util.exc import CommandError

    try:
        command.upgrade(alembic_config(database_url), revision)
    except CommandError as exc:
        if "Can't locate revision" not in str(exc):
            raise
        raise UnknownRevisionError(
            f"the database is at a schema revision this Pallas does not know ({exc}): it was "
            "migrated by a newer release. Run that release, or restore a backup taken before "
            "the upgrade (`pallas restore`); nothing was changed."
        ) from exc
    return True


async def upgrade(database_url: str, revision: str = "heads") -> None:
    """Run the upgrade in a worker thread: Alembic's async env starts its own event loop."""
    if await asyncio.to_thread(upgrade_sync, database_url, revision):
        log.info("database migrated to %s", revision)
    else:
        log.info("database already at %s", revision)
