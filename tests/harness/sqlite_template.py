"""A SQLite database at the migration heads, made once per test process, to copy.

Running Alembic over every migration costs ~0.2-0.5 s of CPU per new database; a test that
needs an empty database at the heads (a runtime's start-up then finds the schema in place,
as every restart in production does) gets a copy instead. The template is made by the same
start-up migration (`migrate.upgrade_sync`) on an empty file, so what it holds is what a
first start produces; the migration tests themselves still start from empty databases.
Each pytest-xdist worker makes its own.
"""

from __future__ import annotations

import sqlite3
import tempfile
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from pathlib import Path

from pallas.core.db import migrate

_template: Path | None = None


def migrated_template() -> Path:
    """The template file (in a worker thread: Alembic's async environment runs its own event
    loop, and the caller may be inside one)."""
    global _template
    if _template is None:
        path = Path(tempfile.mkdtemp(prefix="pallas-template-")) / "pallas.db"
        with ThreadPoolExecutor(1) as pool:
            pool.submit(migrate.upgrade_sync, f"sqlite+aiosqlite:///{path}").result()
        _template = path
    return _template


def copy_database(source: Path, target: Path) -> None:
    """A consistent copy through SQLite's backup API (whatever the source's journal mode)."""
    with closing(sqlite3.connect(source)) as src, closing(sqlite3.connect(target)) as dst:
        src.backup(dst)


def migrated_copy(target: Path) -> Path:
    """`target` made a copy of the template, unless a database is already there (a restart)."""
    if not target.exists():
        copy_database(migrated_template(), target)
    return target
