"""Import SillyTavern world-info JSON and V2 character-card ``character_book`` into entries.

Accepted shapes:

- SillyTavern world info: ``{"entries": {"0": {"uid": 0, "key": [...], ...}, ...}}``
  (an ``entries`` array of the same objects is accepted too);
- V2 character book: ``{"entries": [{"keys": [...], "insertion_order": 10, ...}]}``, either
  bare, as ``{"character_book": {...}}`` or inside a card (``{"spec": "chara_card_v2",
  "data": {"character_book": {...}}}``). V2 ``extensions`` carry the SillyTavern extras.

A malformed entry is reported (file + entry + field) and skipped; the valid entries are kept.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pallas.core.errors import InvalidInput
from pallas.features.worldbook.loader_fields import FieldReader, parse_bool
from pallas.features.worldbook.match import compile_regex_key
from pallas.features.worldbook.model import (
    DEFAULT_DEPTH,
    DEFAULT_GROUP_WEIGHT,
    DEFAULT_ORDER,
    ROLES,
    ST_POSITIONS,
    SelectiveLogic,
    WorldbookEntry,
)


@dataclass(frozen=True, slots=True)
class WorldbookError:
    source: str  # file path (or "<memory>")
    entry: str | None  # "entry 3 (uid=3, 'comment')", None for file-level problems
    message: str

    def __str__(self) -> str:
        where = f"{self.source}: {self.entry}" if self.entry else self.source
        return f"{where}: {self.message}"


@dataclass(frozen=True, slots=True)
class WorldbookLoadResult:
    book: str
    source: str
    format: str  # "st_world_info" | "character_book" | "unknown"
    entries: tuple[WorldbookEntry, ...]
    errors: tuple[WorldbookError, ...]

    @property
    def ok(self) -> bool:
        return not self.errors


class _EntryError(InvalidInput):
    pass


def _locate(data: Any) -> tuple[str, Any]:
    """Find the entries container and name the format."""
    if not isinstance(data, Mapping):
        return "unknown", None
    if isinstance(data.get("data"), Mapping) and "character_book" in data["data"]:
        return _locate_book(data["data"]["character_book"])
    if "character_book" in data:
        return _locate_book(data["character_book"])
    entries = data.get("entries")
    if isinstance(entries, Mapping):
        return "st_world_info", entries
    if isinstance(entries, list):
        is_v2 = any(isinstance(e, Mapping) and "keys" in e for e in entries)
        return ("character_book" if is_v2 else "st_world_info"), entries
    return "unknown", None


def _locate_book(book: Any) -> tuple[str, Any]:
    if isinstance(book, Mapping) and isinstance(book.get("entries"), list | Mapping):
        return "character_book", book["entries"]
    return "unknown", None


def _label(index: str, raw: Any) -> str:
    if not isinstance(raw, Mapping):
        return f"entry {index}"
    uid = raw.get("uid", raw.get("id"))
    comment = raw.get("comment") or raw.get("name") or ""
    parts = [f"uid={uid}"] if uid is not None else []
    if isinstance(comment, str) and comment.strip():
        parts.append(repr(comment.strip()[:40]))
    return f"entry {index}" + (f" ({', '.join(parts)})" if parts else "")


def _check_keys(keys: Iterable[str]) -> None:
    for key in keys:
        try:
            compile_regex_key(key)
        except re.error as exc:
            raise _EntryError(f"key {key!r} is not a valid regular expression: {exc}") from exc


def _common(r: FieldReader, ext: FieldReader) -> dict[str, Any]:
    """Fields named alike in both formats (V2 keeps them in `extensions`)."""
    groups_text = ext.text("group", default="")
    delay_rec = ext.raw("delayUntilRecursion", "delay_until_recursion")
    return {
        "depth": ext.integer("depth", default=DEFAULT_DEPTH, lo=0),
        "role": ROLES[ext.integer("role", default=0, lo=0, hi=2)],
        "probability": ext.number("probability", default=100.0, lo=0, hi=100),
        "use_probability": ext.flag("useProbability", default=True),
        "selective_logic": SelectiveLogic(ext.integer("selectiveLogic", default=0, lo=0, hi=3)),
        "groups": tuple(g.strip() for g in groups_text.split(",") if g.strip()),
        "group_override": ext.flag("groupOverride", "group_override", default=False),
        "group_weight": ext.number(
            "groupWeight", "group_weight", default=DEFAULT_GROUP_WEIGHT, lo=0
        ),
        "use_group_scoring": ext.opt_flag("useGroupScoring", "use_group_scoring"),
        "scan_depth": ext.opt_integer("scanDepth", "scan_depth", lo=0, hi=1000),
        "case_sensitive": ext.opt_flag("caseSensitive", "case_sensitive"),
        "match_whole_words": ext.opt_flag("matchWholeWords", "match_whole_words"),
        "exclude_recursion": ext.flag("excludeRecursion", "exclude_recursion", default=False),
        "prevent_recursion": ext.flag("preventRecursion", "prevent_recursion", default=False),
        "delay_until_recursion": _recursion_level(delay_rec, r),
        "sticky": ext.opt_integer("sticky", lo=0) or 0,
        "cooldown": ext.opt_integer("cooldown", lo=0) or 0,
        "delay": ext.opt_integer("delay", lo=0) or 0,
    }


def _recursion_level(value: Any, r: FieldReader) -> int:
    if value is None or value is False:
        return 0
    if value is True:
        return 1
    if isinstance(value, int) and value >= 0:
        return value
    r.fail("delayUntilRecursion", "must be a boolean or a non-negative integer")
    return 0


def _st_entry(raw: Mapping[str, Any], index: str, book: str) -> WorldbookEntry:
    r = FieldReader(raw)
    position = r.integer("position", default=0, lo=0, hi=7)
    fields = _common(r, r)
    entry = WorldbookEntry(
        book=book,
        uid=r.integer("uid", default=int(index) if index.isdigit() else None),
        content=r.text("content", required=True),
        keys=r.keys("key"),
        secondary_keys=r.keys("keysecondary"),
        comment=r.text("comment", default=""),
        enabled=not r.flag("disable", default=False),
        constant=r.flag("constant", default=False),
        selective=r.flag("selective", default=True),
        order=r.integer("order", default=DEFAULT_ORDER),
        position=ST_POSITIONS[position],
        st_position=position,
        **fields,
    )
    r.raise_if_failed(_EntryError)
    return entry


def _v2_entry(raw: Mapping[str, Any], index: str, book: str) -> WorldbookEntry:
    r = FieldReader(raw)
    ext_raw = raw.get("extensions") or {}
    if not isinstance(ext_raw, Mapping):
        raise _EntryError("extensions: must be an object")
    ext = FieldReader(ext_raw, parent=r)
    position = ext.opt_integer("position", lo=0, hi=7)
    if position is None:
        position = 0 if raw.get("position") == "before_char" else 1
    fields = _common(r, ext)
    if fields["case_sensitive"] is None and "case_sensitive" in raw:
        fields["case_sensitive"] = parse_bool(raw["case_sensitive"])
    entry = WorldbookEntry(
        book=book,
        uid=r.integer("id", default=int(index)),
        content=r.text("content", required=True),
        keys=r.keys("keys"),
        secondary_keys=r.keys("secondary_keys"),
        comment=r.text("comment", "name", default=""),
        enabled=r.flag("enabled", default=True),
        constant=r.flag("constant", default=False),
        selective=r.flag("selective", default=False),
        order=r.integer("insertion_order", default=DEFAULT_ORDER),
        position=ST_POSITIONS[position],
        st_position=position,
        **fields,
    )
    r.raise_if_failed(_EntryError)
    return entry


def parse_worldbook(data: Any, *, book: str, source: str = "<memory>") -> WorldbookLoadResult:
    """Normalise parsed JSON into entries; never raises for bad content."""
    fmt, container = _locate(data)
    if container is None:
        error = WorldbookError(
            source, None, "not a worldbook: expected an 'entries' object/array or a character_book"
        )
        return WorldbookLoadResult(book, source, fmt, (), (error,))
    items = (
        [(str(k), v) for k, v in container.items()]
        if isinstance(container, Mapping)
        else [(str(i), v) for i, v in enumerate(container)]
    )
    build = _v2_entry if fmt == "character_book" else _st_entry
    entries: list[WorldbookEntry] = []
    errors: list[WorldbookError] = []
    seen: set[int] = set()
    for index, raw in items:
        label = _label(index, raw)
        try:
            if not isinstance(raw, Mapping):
                raise _EntryError("must be an object")
            entry = build(raw, index, book)
            _check_keys(entry.keys + entry.secondary_keys)
            if entry.uid in seen:
                raise _EntryError(f"duplicate uid {entry.uid}; the first one is kept")
        except _EntryError as exc:
            errors.append(WorldbookError(source, label, str(exc)))
            continue
        seen.add(entry.uid)
        entries.append(entry)
    return WorldbookLoadResult(book, source, fmt, tuple(entries), tuple(errors))


def parse_worldbook_json(text: str, *, book: str, source: str = "<memory>") -> WorldbookLoadResult:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        error = WorldbookError(source, None, f"invalid JSON: {exc}")
        return WorldbookLoadResult(book, source, "unknown", (), (error,))
    return parse_worldbook(data, book=book, source=source)


def load_worldbook_file(path: Path, *, book: str | None = None) -> WorldbookLoadResult:
    """Read one JSON file; the book name defaults to the file stem."""
    name = book or path.stem
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        error = WorldbookError(str(path), None, f"cannot read file: {exc}")
        return WorldbookLoadResult(name, str(path), "unknown", (), (error,))
    return parse_worldbook_json(text, book=name, source=str(path))


def load_worldbooks(
    directory: Path, names: Iterable[str]
) -> tuple[tuple[WorldbookEntry, ...], tuple[WorldbookError, ...]]:
    """Load the named books (``name`` or ``name.json``) from `directory`."""
    entries: list[WorldbookEntry] = []
    errors: list[WorldbookError] = []
    for name in dict.fromkeys(names):
        file_name = name if name.endswith(".json") else f"{name}.json"
        if Path(file_name).name != file_name or file_name.startswith("."):
            errors.append(WorldbookError(file_name, None, "book names must be plain file names"))
            continue
        result = load_worldbook_file(directory / file_name)
        entries.extend(result.entries)
        errors.extend(result.errors)
    return tuple(entries), tuple(errors)
