"""`pallas replay` on the command line: argparse registration, config overlays, output."""

from __future__ import annotations

import argparse
import json
import sys
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pallas.cli.replay.simulation import ConfigSource, replay_events
from pallas.config import GroupConfig
from pallas.core.config_files import GroupConfigStore, deep_merge
from pallas.features.cost import Limits
from pallas.features.persona import PersonaStore


class OverlayConfigStore:
    """A group config store with extra TOML overrides merged over every group's config."""

    def __init__(self, base: ConfigSource, overrides: Sequence[Mapping[str, Any]]) -> None:
        self._base = base
        self._overrides = list(overrides)

    def get(self, group_id: int) -> GroupConfig:
        data: dict[str, Any] = self._base.get(group_id).model_dump()
        for override in self._overrides:
            data = deep_merge(data, override)
        return GroupConfig.model_validate(data)


def _read_lines(path: str) -> list[bytes]:
    if path == "-":
        return sys.stdin.buffer.read().splitlines()
    return Path(path).read_bytes().splitlines()


def _replay_command(args: argparse.Namespace) -> int:
    from pallas.core.settings import PallasSettings
    from pallas.features.worldbook import WorldbookLibrary

    settings = PallasSettings.from_env()
    config_dir = args.config_dir or settings.pallas_config_dir
    group_configs: ConfigSource = GroupConfigStore(GroupConfig, Path(config_dir) / "groups")
    overrides = []
    for file in args.group_config or ():
        try:
            overrides.append(tomllib.loads(Path(file).read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            print(f"cannot read group config {file}: {exc}", file=sys.stderr)
            return 2
    if overrides:
        group_configs = OverlayConfigStore(group_configs, overrides)
        try:
            group_configs.get(0)
        except ValueError as exc:  # pydantic ValidationError is a ValueError
            print(f"invalid group config override: {exc}", file=sys.stderr)
            return 2
    personas = PersonaStore(Path(config_dir) / "personas")
    try:
        lines = _read_lines(args.file)
    except OSError as exc:
        print(f"cannot read {args.file}: {exc}", file=sys.stderr)
        return 2
    report = replay_events(
        lines,
        group_configs,
        personas,
        args.seed,
        args.self_id,
        reply_latency_s=args.reply_latency,
        deployment=Limits(settings.pallas_daily_call_cap, 0),  # a replay counts calls only
        stake_keys=WorldbookLibrary(Path(config_dir) / "worldbooks"),
    )
    if args.json:
        print(json.dumps(report.to_json(), ensure_ascii=False, indent=2))
        return 0
    if not args.totals_only:
        print(report.format_table())
        print()
    for problem in report.problems:
        print(f"! {problem}", file=sys.stderr)
    print(report.format_totals())
    return 0


def register_replay(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    replay = sub.add_parser(
        "replay",
        help="run a OneBot v11 event log (JSONL) through routing; print decisions and totals",
        description=(
            "Replay OneBot v11 events (one JSON object per line) through the real routing with "
            "a fake clock and a seeded rng. No LLM is called: an LLM turn is answered by the "
            "bot's next line in the file, or by a simulated delivery."
        ),
    )
    replay.add_argument("file", help="JSONL file of OneBot v11 events ('-' for stdin)")
    replay.add_argument(
        "--config-dir", help="config directory (groups/, personas/); default PALLAS_CONFIG_DIR"
    )
    replay.add_argument(
        "--group-config",
        action="append",
        metavar="FILE.toml",
        help="extra TOML merged over every group's config (repeatable; later files win)",
    )
    replay.add_argument("--seed", type=int, default=0, help="seed of the routing rng")
    replay.add_argument(
        "--self-id", type=int, help="the bot's QQ id (default: self_id of the events)"
    )
    replay.add_argument(
        "--reply-latency",
        type=float,
        default=4.0,
        metavar="S",
        help="seconds from an LLM decision to a simulated delivery (default 4)",
    )
    replay.add_argument("--json", action="store_true", help="machine-readable output")
    replay.add_argument("--totals-only", action="store_true", help="skip the decision table")
    replay.set_defaults(handler=_replay_command)
