"""Subcommands of the `pallas` CLI. Each `register_*` adds one subparser."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from pallas.console.replay import register_replay
from pallas.core.config_files import GroupConfigStore
from pallas.core.db import migrate
from pallas.core.db.engine import normalise_database_url
from pallas.core.settings import PallasSettings
from pallas.product.config import GroupConfig
from pallas.product.llm.persona.pack import PersonaStore


def _settings() -> PallasSettings:
    return PallasSettings.from_env()


async def _db_upgrade(args: argparse.Namespace) -> int:
    url = normalise_database_url(_settings().database_url)
    await migrate.upgrade(url, args.revision)
    print(f"database at {url.split('///')[-1]} is at {args.revision}")
    return 0


def register_db(sub: argparse._SubParsersAction) -> None:
    db = sub.add_parser("db", help="database maintenance")
    db_sub = db.add_subparsers(dest="db_command", required=True)
    up = db_sub.add_parser("upgrade", help="apply migrations (also done at bot start-up)")
    up.add_argument("revision", nargs="?", default="heads")
    up.set_defaults(handler=_db_upgrade)


def _config_check(args: argparse.Namespace) -> int:
    settings = _settings()
    store = GroupConfigStore(GroupConfig, settings.groups_dir)
    problems = store.errors()
    files = sorted(p.name for p in settings.groups_dir.glob("*.toml"))
    print(f"group config files in {settings.groups_dir}: {', '.join(files) or 'none'}")
    for name, message in problems.items():
        print(f"ERROR {name}: {message}")
    personas = PersonaStore(settings.personas_dir)
    for path in sorted(settings.personas_dir.glob("*.toml")):
        pack = personas.get(path.stem)
        print(f"persona {path.stem}: {pack.name} (aliases: {', '.join(pack.aliases)})")
    if args.group is not None:
        print(store.get(args.group).model_dump_json(indent=2))
    return 1 if problems else 0


def register_config(sub: argparse._SubParsersAction) -> None:
    cfg = sub.add_parser("config", help="configuration files")
    cfg_sub = cfg.add_subparsers(dest="config_command", required=True)
    check = cfg_sub.add_parser("check", help="validate config/groups and config/personas")
    check.add_argument("--group", type=int, help="also print the merged config of this group")
    check.set_defaults(handler=_config_check)


REGISTRY: list[Callable[[argparse._SubParsersAction], None]] = [register_db, register_config]
REGISTRY.append(register_replay)
