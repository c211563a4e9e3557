"""`pallas memory list|delete|forget-user`: operator access to the memory store.

    pallas memory list [--bot B] [--group G] [--kind K] [--user U] [--deleted] [--limit N]
    pallas memory delete ID [ID …]
    pallas memory forget-user USER [--bot B] [--group G]

Works on the database named by DATABASE_URL (migrated first, like the bot does). Deletes are
soft (the rows stay with `deleted_at` and a reason). A running bot's retrieval cache is keyed by
per-scope write generations in its StateStore: with the default in-process store it notices a
CLI delete when its cache entry expires (5 minutes, process-wide); with a shared
StateStore (Redis) at once. In-group commands (`/pallas memory del`, "忘记我") apply at once.
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime

from pallas.core.clock import SystemClock
from pallas.core.db import migrate
from pallas.core.db.engine import create_engine, normalise_database_url, session_factory
from pallas.core.settings import PallasSettings
from pallas.features.memory import (
    PERSONAL_KINDS,
    MemoryItem,
    MemoryRepository,
    group_scope,
    parse_ref,
    resolve_kind,
)


def _when(ts: float | None) -> str:
    if ts is None:
        return "-"
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M")


def format_row(item: MemoryItem) -> str:
    subject = f" subject={item.subject_user_id}" if item.subject_user_id is not None else ""
    deleted = f" DELETED({item.delete_reason} {_when(item.deleted_at)})" if item.deleted_at else ""
    return (
        f"{item.ref:<10} {item.kind:<13} {item.scope}{subject} origin={item.origin} "
        f"created={_when(item.created_at)} used={item.access_count}x{deleted}\n"
        f"           {item.text}\n           source={item.source}"
    )


async def _repo() -> tuple[MemoryRepository, object]:
    settings = PallasSettings.from_env()
    url = normalise_database_url(settings.database_url)
    await migrate.upgrade(url)
    engine = create_engine(url)
    return MemoryRepository(session_factory(engine)), engine


def _scopes(args: argparse.Namespace) -> list[str] | None:
    if args.group is None:
        return None
    if args.bot is None:
        raise SystemExit("--group needs --bot (memory scopes are per bot and group)")
    return [group_scope(args.bot, args.group)]


async def _list(args: argparse.Namespace) -> int:
    kind = resolve_kind(args.kind) if args.kind else None
    if args.kind and kind is None:
        print(f"unknown kind {args.kind!r}")
        return 2
    repo, engine = await _repo()
    try:
        items = await repo.list_items(
            scopes=_scopes(args),
            bot_id=args.bot,
            kind=kind,
            subject_user_id=args.user,
            include_deleted=args.deleted,
            limit=args.limit,
        )
    finally:
        await engine.dispose()  # type: ignore[attr-defined]
    for item in items:
        print(format_row(item))
    print(f"{len(items)} item(s)")
    return 0


async def _delete(args: argparse.Namespace) -> int:
    ids = [parse_ref(v) for v in args.ids]
    if any(i is None for i in ids):
        print("ids look like 42 or mem:42")
        return 2
    repo, engine = await _repo()
    try:
        gone = await repo.soft_delete(
            [i for i in ids if i is not None], now=SystemClock().now(), reason="cli"
        )
    finally:
        await engine.dispose()  # type: ignore[attr-defined]
    print(f"deleted {len(gone)} item(s): {', '.join(i.ref for i in gone) or '-'}")
    return 0 if gone else 1


async def _forget_user(args: argparse.Namespace) -> int:
    repo, engine = await _repo()
    try:
        gone = await repo.forget_subject(
            args.user_id,
            now=SystemClock().now(),
            kinds=PERSONAL_KINDS,
            scopes=_scopes(args),
            bot_id=args.bot,
        )
    finally:
        await engine.dispose()  # type: ignore[attr-defined]
    print(f"forgot {len(gone)} item(s) about {args.user_id}: {', '.join(i.ref for i in gone)}")
    return 0


def register_memory(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    memory = sub.add_parser("memory", help="list / delete remembered facts, forget a user")
    msub = memory.add_subparsers(dest="memory_command", required=True)
    ls = msub.add_parser("list", help="list memory items, newest first")
    ls.add_argument("--bot", type=int)
    ls.add_argument("--group", type=int)
    ls.add_argument("--kind", help="group | event | ip | teach | knowledge | relation | fact")
    ls.add_argument("--user", type=int, help="only items about this user id")
    ls.add_argument("--deleted", action="store_true", help="include soft-deleted items")
    ls.add_argument("--limit", type=int, default=50)
    ls.set_defaults(handler=_list)
    rm = msub.add_parser("delete", help="soft-delete items by id")
    rm.add_argument("ids", nargs="+")
    rm.set_defaults(handler=_delete)
    fu = msub.add_parser("forget-user", help="forget a user's facts, notes and teachings")
    fu.add_argument("user_id", type=int)
    fu.add_argument("--bot", type=int)
    fu.add_argument("--group", type=int, help="only in this group (needs --bot)")
    fu.set_defaults(handler=_forget_user)
