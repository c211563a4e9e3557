"""Every key an admin can set in a group file is read by the code (issue 10: no dead config).

The rule this test proves, per field of every model reachable from `GroupConfig`:
- the field's name is read as an attribute (`something.<name>`) somewhere in `pallas/` or
  `packages/` (an AST scan: assignments and class bodies do not count), or
- the field is read by name (`getattr(config, kind)`, `config.option(book, "<name>")`,
  `weights.as_mapping()`) and is listed in `READ_BY_NAME` with the reader; each listed name
  and the listed reader method must still exist.
The scan is by name, so a field sharing its name with another class's attribute can slip
through: keys found dead that way were removed by hand and are pinned in `REMOVED` (old files
that still set them get the usual "extra inputs are not permitted" error naming the key).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import get_args

import pytest
from pydantic import BaseModel, ValidationError

from pallas.config import GroupConfig

ROOT = Path(__file__).resolve().parents[3]

# "section.key" (model path, dict keys shown as the model) -> who reads it by name
READ_BY_NAME: dict[str, str] = {
    # RetrievalConfig.block(kind) -> getattr(self, kind) for each memory block kind
    "memory.group_memory": "RetrievalConfig.block",
    "memory.group_events": "RetrievalConfig.block",
    "memory.ip_knowledge": "RetrievalConfig.block",
    "memory.teachings": "RetrievalConfig.block",
    "memory.relationship": "RetrievalConfig.block",
    "memory.person_facts": "RetrievalConfig.block",
    "memory.old_topics": "RetrievalConfig.block",
    # WorldbookConfig.option(book, "timed_unit") (book option falls back to the group value)
    "worldbook.timed_unit": "WorldbookConfig.option",
    "worldbook.book_options.timed_unit": "WorldbookConfig.option",
    # BlameWeights.as_mapping() keyed by source kind
    "learning.blame_weights.expression": "BlameWeights.as_mapping",
    "learning.blame_weights.semantic": "BlameWeights.as_mapping",
    "learning.blame_weights.bot_line": "BlameWeights.as_mapping",
    # RetentionConfig.days(kind) -> getattr(self, f"{kind}_days") for each kind of row
    "retention.messages_days": "RetentionConfig.days",
    "retention.sessions_days": "RetentionConfig.days",
    "retention.snapshots_days": "RetentionConfig.days",
    "retention.usage_days": "RetentionConfig.days",
    "retention.audit_days": "RetentionConfig.days",
    "retention.routes_days": "RetentionConfig.days",
}

# keys removed by issue 10 because nothing read them (the name scan alone cannot see that)
REMOVED: list[tuple[str, dict]] = [
    ("bot_label", {"context": {"bot_label": "x"}}),  # came from the persona pack
    ("other_bot_label", {"context": {"other_bot_label": "x"}}),
    ("assistant_label", {"context": {"assistant_label": "x"}}),
    ("cache_ttl_seconds", {"memory": {"cache_ttl_seconds": 10}}),  # process-wide cache
    ("cache_max_entries", {"memory": {"cache_max_entries": 10}}),
    ("supports_system_role", {"models": {"default": {"supports_system_role": False}}}),
    ("requires_alternation", {"models": {"default": {"requires_alternation": True}}}),
]


def _code_reads() -> tuple[set[str], set[str]]:
    attrs: set[str] = set()
    strings: set[str] = set()
    for folder in ("pallas", "packages"):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                    attrs.add(node.attr)
                elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                    strings.add(node.value)
    return attrs, strings


def _models(annotation: object) -> Iterator[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
    for arg in get_args(annotation):
        yield from _models(arg)


def _fields(model: type[BaseModel], prefix: str = "", seen: frozenset = frozenset()):
    for name, info in model.model_fields.items():
        yield prefix + name, name
        for sub in _models(info.annotation):
            if sub not in seen:
                yield from _fields(sub, f"{prefix}{name}.", seen | {sub})


def test_every_group_config_key_is_read_by_the_code():
    attrs, _ = _code_reads()
    fields = list(_fields(GroupConfig))
    assert len(fields) > 100  # the walk reaches the nested section models
    dead = [path for path, name in fields if name not in attrs and path not in READ_BY_NAME]
    assert dead == [], f"group config keys nothing reads (wire them or remove them): {dead}"


def test_read_by_name_list_is_honest():
    attrs, _ = _code_reads()
    paths = {path for path, _ in _fields(GroupConfig)}
    for path, reader in READ_BY_NAME.items():
        assert path in paths, f"{path} is no longer a config key: drop it from READ_BY_NAME"
        method = reader.split(".")[-1]
        assert method in attrs, f"{reader} (the reader of {path}) is gone"


@pytest.mark.parametrize(("key", "data"), REMOVED, ids=[k for k, _ in REMOVED])
def test_removed_keys_are_rejected_with_their_name(key, data):
    with pytest.raises(ValidationError, match=key):
        GroupConfig.model_validate(data)
