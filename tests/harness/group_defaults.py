"""Test defaults written into a copied `config/groups/default.toml`.

Ambient replies, quotes and low-engagement phrases are dice rolls (8 %, 25 %, up to 35 % by
default). Tests switch them off so an extra send never lands in their assertions; a test that
exercises one turns it on in its group's file (group files merge key by key).

The cost guard's per-member rate limit (4 quick turns per member by default) is switched off
the same way: many tests have one member talk to the bot dozens of times in a few seconds.
The cost guard's own tests turn it on (`[cost.member] enabled = true`) in their group files.

Index-time memory expansion (on by default: one background cheap call per stored row) is
switched off too: its calls would take the scripted answers other tests enqueue for the reply
or the judge, and change the counts of chat requests they assert. A test of expansion turns it
on in its group's file (`[memory.expansion] enabled = true`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import tomlkit

NO_DICE: dict[str, dict[str, Any]] = {
    "routing": {
        "ambient": {"enabled": False},
        "quote": {"probability": 0.0},
        "low_engagement": {"probability_steps": [[0, 0.0]]},
    },
    "cost": {"member": {"enabled": False}},
    "memory": {"expansion": {"enabled": False}},
}


def write_group_defaults(config_dir: Path, **extra: dict[str, Any]) -> None:
    """Merge `NO_DICE` (and `extra` tables) into `config_dir/groups/default.toml`."""
    path = config_dir / "groups" / "default.toml"
    doc = tomlkit.parse(path.read_text(encoding="utf-8"))
    for tables in (NO_DICE, extra):  # extra's tables merge into NO_DICE's, key by key
        for name, values in tables.items():
            table = doc.setdefault(name, tomlkit.table())
            for key, value in values.items():
                if isinstance(value, dict):
                    table.setdefault(key, tomlkit.table()).update(value)
                else:
                    table[key] = value
    path.write_text(tomlkit.dumps(doc), encoding="utf-8")
