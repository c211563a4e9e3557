"""Subcommands of the `pallas` CLI. Each `register_*` adds one subparser."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import asdict

from pallas.cli.backup_cli import register_backup
from pallas.cli.kb_cli import register_kb
from pallas.cli.learning_cli import register_learn
from pallas.cli.mcp_cli import register_mcp
from pallas.cli.memory_cli import register_memory
from pallas.cli.replay import register_replay
from pallas.cli.usage_cli import register_usage
from pallas.cli.voice_cli import register_voice
from pallas.config import GroupConfig
from pallas.core.config_files import GroupConfigStore
from pallas.core.db import migrate
from pallas.core.db.engine import normalise_database_url
from pallas.core.settings import PallasSettings
from pallas.features.persona import PersonaStore


def _settings() -> PallasSettings:
    return PallasSettings.from_env()


async def _db_upgrade(args: argparse.Namespace) -> int:
    url = normalise_database_url(_settings().database_url)
    await migrate.upgrade(url, args.revision)
    print(f"database at {url.split('///')[-1]} is at {args.revision}")
    return 0


def register_db(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    db = sub.add_parser("db", help="database maintenance")
    db_sub = db.add_subparsers(dest="db_command", required=True)
    up = db_sub.add_parser("upgrade", help="apply migrations (also done at bot start-up)")
    up.add_argument("revision", nargs="?", default="heads")
    up.set_defaults(handler=_db_upgrade)


def _config_check(args: argparse.Namespace) -> int:
    settings = _settings()
    group_configs = GroupConfigStore(GroupConfig, settings.groups_dir)
    problems = group_configs.errors()
    files = sorted(p.name for p in settings.groups_dir.glob("*.toml"))
    print(f"group config files in {settings.groups_dir}: {', '.join(files) or 'none'}")
    for name, message in problems.items():
        print(f"ERROR {name}: {message}")
    personas = PersonaStore(settings.personas_dir)
    for path in sorted(settings.personas_dir.glob("*.toml")):
        pack = personas.get(path.stem)
        print(f"persona {path.stem}: {pack.name} (aliases: {', '.join(pack.aliases)})")
    if args.group is not None:
        print(group_configs.get(args.group).model_dump_json(indent=2))
    return 1 if problems else 0


def register_config(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    cfg = sub.add_parser("config", help="configuration files")
    cfg_sub = cfg.add_subparsers(dest="config_command", required=True)
    check = cfg_sub.add_parser("check", help="validate config/groups and config/personas")
    check.add_argument("--group", type=int, help="also print the merged config of this group")
    check.set_defaults(handler=_config_check)


REGISTRY: list[Callable[[argparse._SubParsersAction[argparse.ArgumentParser]], None]] = [
    register_db,
    register_config,
]
REGISTRY.append(register_replay)
REGISTRY.append(register_backup)


async def _context(args: argparse.Namespace) -> int:
    """Print the last REPLY turn(s) of a group: sections, sizes, trims and the exact request."""
    from pallas.context.analyzer import render_snapshot
    from pallas.core.db.engine import create_engine, session_factory
    from pallas.core.db.repositories.snapshots import SnapshotRepository

    url = normalise_database_url(_settings().database_url)
    engine = create_engine(url)
    try:
        repo = SnapshotRepository(session_factory(engine))
        snapshots = await repo.latest(args.group, bot_id=args.bot, limit=args.last)
    finally:
        await engine.dispose()
    if not snapshots:
        print(f"no reply turns recorded for group {args.group}")
        return 1
    for snap in reversed(snapshots):
        if args.json:
            import json

            print(json.dumps(asdict(snap), ensure_ascii=False, indent=1))
        else:
            print(render_snapshot(asdict(snap), with_request=not args.no_request))
            print()
    return 0


def register_context(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("context", help="what the model saw on a group's last reply turn")
    parser.add_argument("--group", type=int, required=True)
    parser.add_argument("--bot", type=int, default=None)
    parser.add_argument("--last", type=int, default=1, help="how many turns (newest last)")
    parser.add_argument("--no-request", action="store_true", help="omit the full request")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(handler=_context)


REGISTRY.append(register_context)

REGISTRY.append(register_memory)

REGISTRY.append(register_learn)

REGISTRY.append(register_kb)  # pallas kb import DIR --pool NAME
REGISTRY.append(register_usage)
REGISTRY.append(register_mcp)  # pallas mcp list
REGISTRY.append(register_voice)  # pallas voice say TEXT

from pallas.cli.deps import register_deps  # noqa: E402  (pallas deps [--check])

REGISTRY.append(register_deps)

from pallas.cli.structure import register_structure  # noqa: E402  (pallas structure [--check])

REGISTRY.append(register_structure)
