"""`pallas kb import DIR --pool NAME`: load a folder of .md / .txt files into a knowledge pool.

    pallas kb import ./lore --pool arknights [--bot 123] [--max-chars 300] [--dry-run]

Files are chunked (`pallas.features.kb.importer`) and stored as `knowledge` rows in the
`pool:<NAME>` scope, keyed `<file stem>_<n>` (a re-import replaces rows with the same key).
Groups read a pool when their persona / overrides name it in a placeholder
(`【kb::NAME::3】`) or list it in `memory.shared_pools`. With `PALLAS_STATE_URL` the import
bumps the pool's generation in the deployment's shared store, so running bots read the new
rows on their next turn; a bot on the in-process store (one process) cannot be told from here
and sees them when its retrieval cache entries expire (5 minutes by default) — the command
says so.
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from pallas.core.clock import SystemClock
from pallas.core.db import migrate
from pallas.core.db.engine import create_engine, normalise_database_url, session_factory
from pallas.core.settings import PallasSettings
from pallas.core.state import MemoryStateStore, StateStore
from pallas.core.state_redis import close_state_store, open_state_store
from pallas.features.kb import Chunk, chunk_folder
from pallas.features.memory import (
    KNOWLEDGE,
    TEXT_MAX_CHARS,
    InvalidPoolName,
    MemoryRepository,
    MemoryService,
    pool_scope,
)


def _import(args: argparse.Namespace) -> int | Coroutine[Any, Any, int]:
    """Validate and chunk here (sync); storing is the coroutine `pallas` runs after."""
    folder = Path(args.dir)
    if not folder.is_dir():
        print(f"not a folder: {folder}")
        return 2
    try:
        scope = pool_scope(args.pool)
    except InvalidPoolName as exc:
        print(exc)
        return 2
    chunks = chunk_folder(folder, max_chars=min(args.max_chars, TEXT_MAX_CHARS))
    if not chunks:
        print(f"no .md / .txt text under {folder}")
        return 1
    if args.dry_run:
        for chunk in chunks:
            print(f"{chunk.key}: {chunk.text[:80]}")
        print(f"{len(chunks)} chunk(s) from {len({c.file for c in chunks})} file(s) (dry run)")
        return 0
    return _store(args, scope, chunks)


async def _store(args: argparse.Namespace, scope: str, chunks: list[Chunk]) -> int:
    settings = PallasSettings.from_env()
    url = normalise_database_url(settings.database_url)
    await migrate.upgrade(url)
    engine = create_engine(url)
    clock = SystemClock()
    shared = bool(settings.pallas_state_url.strip())
    state: StateStore = MemoryStateStore(clock)
    if shared:  # the running bots' store: the pool's new generation reaches their caches
        state = await open_state_store(
            settings.pallas_state_url, settings.pallas_state_prefix, clock=clock, wait_s=2.0
        )
    service = MemoryService(MemoryRepository(session_factory(engine)), state, clock)
    actions: Counter[str] = Counter()
    try:
        for chunk in chunks:
            outcome = await service.remember(
                bot_id=args.bot,
                scope=scope,
                kind=KNOWLEDGE,
                text=chunk.text,
                origin="kb_import",
                key=chunk.key,
                source={"file": chunk.file, "chunk": chunk.index, "pool": args.pool},
            )
            actions[outcome.action] += 1
    finally:
        await engine.dispose()
        await close_state_store(state)
    summary = ", ".join(f"{n} {a}" for a, n in sorted(actions.items()))
    files = len({c.file for c in chunks})
    print(f"pool {args.pool}: {len(chunks)} chunk(s) from {files} file(s): {summary}")
    if not shared:
        print(
            "a running bot (in-process state) reads them within 5 minutes (its retrieval "
            "cache); restart it to read them at once"
        )
    return 0


def register_kb(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    kb = sub.add_parser("kb", help="knowledge pools for 【kb::…】 placeholders")
    ksub = kb.add_subparsers(dest="kb_command", required=True)
    imp = ksub.add_parser("import", help="chunk a folder of .md/.txt files into a pool")
    imp.add_argument("dir")
    imp.add_argument("--pool", required=True, help="pool name ([A-Za-z0-9_.-], ≤ 64)")
    imp.add_argument("--bot", type=int, default=0, help="owning bot id (pools are shared)")
    imp.add_argument("--max-chars", type=int, default=TEXT_MAX_CHARS, help="chunk size cap")
    imp.add_argument("--dry-run", action="store_true", help="print the chunks, store nothing")
    imp.set_defaults(handler=_import)
