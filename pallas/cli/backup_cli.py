"""`pallas backup PATH`, `pallas restore PATH` and `pallas vacuum`: copies of the live database,
putting one back, and giving its free space back to the file system.

The database is the deployment's `DATABASE_URL` (SQLite by default, PostgreSQL by URL). A
backup can be taken while the bot runs; a restore replaces the database and should be run with
the bot stopped (see `pallas.core.db.backup`).
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from pallas.core.db.backup import (
    BackupError,
    BackupReport,
    backup_postgres,
    backup_sqlite,
    restore_postgres,
    restore_sqlite,
    sqlite_path,
)
from pallas.core.db.engine import normalise_database_url
from pallas.core.db.vacuum import VacuumError, vacuum_postgres, vacuum_sqlite
from pallas.core.settings import PallasSettings


def _database_url() -> str:
    return normalise_database_url(PallasSettings.from_env().database_url)


def _print(report: BackupReport) -> int:
    for line in report.lines():
        print(line)
    return 0


def _backup(args: argparse.Namespace) -> int:
    url = _database_url()
    path = sqlite_path(url)
    try:
        if path is not None:
            return _print(backup_sqlite(path, args.path))
        report = backup_postgres(url, args.path)
        print(f"pg_dump archive at {report.path}: {report.bytes / 1_048_576:.1f} MiB "
              f"in {report.seconds:.2f} s")  # fmt: skip
        return 0
    except BackupError as exc:
        print(f"backup failed: {exc}")
        return 1


def _restore(args: argparse.Namespace) -> int:
    url = _database_url()
    path = sqlite_path(url)
    if not args.yes:
        print("restore replaces the whole database; stop the bot first, then run again with --yes")
        return 2
    try:
        if path is not None:
            return _print(restore_sqlite(args.path, path))
        restore_postgres(args.path, url)
        print(f"restored {args.path} into the PostgreSQL database")
        return 0
    except BackupError as exc:
        print(f"restore failed: {exc}")
        return 1


def _vacuum(_args: argparse.Namespace) -> int:
    url = _database_url()
    path = sqlite_path(url)
    try:
        if path is not None:
            for line in vacuum_sqlite(path).lines():
                print(line)
            return 0
        seconds = asyncio.run(vacuum_postgres(url))
        print(f"VACUUM (ANALYZE) done in {seconds:.2f} s (PostgreSQL's autovacuum does this too)")
        return 0
    except VacuumError as exc:
        print(f"vacuum failed: {exc}")
        return 1


def register_backup(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    backup = sub.add_parser("backup", help="a consistent copy of the database (bot may run)")
    backup.add_argument("path", type=Path, help="a new file (SQLite copy or pg_dump archive)")
    backup.set_defaults(handler=_backup)
    restore = sub.add_parser("restore", help="replace the database with a backup (bot stopped)")
    restore.add_argument("path", type=Path, help="a file made by `pallas backup`")
    restore.add_argument("--yes", action="store_true", help="really replace the database")
    restore.set_defaults(handler=_restore)
    vacuum = sub.add_parser(
        "vacuum", help="give free space back to the file system once (SQLite: bot stopped)"
    )
    vacuum.set_defaults(handler=_vacuum)
