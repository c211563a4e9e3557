"""One-line descriptions of config keys, taken from where the keys are defined.

The console's config page shows each key with a description; so that the page and the docs
cannot drift, nothing here is written by hand. For a key the description is, first found:

1. the pydantic field's `Field(description=...)`;
2. the comment on the field's line in the config model's source (or the comment block right
   above the field);
3. the trailing comment of the key's line in docs/configuration.md's TOML examples (the blocks
   `tests/unit/core/test_docs_config.py` validates).

A table's description is its model's docstring (first sentence), else the parent field's note.

Operators read Chinese: `pallas/config_zh.toml`, next to the config models, holds the Chinese
description of every key and table by schema path, and the console shows it first (the English
note stays as the tooltip). `tests/unit/web/test_config_zh.py` fails when a key of the models
has no Chinese line there, or a line names a key that no longer exists.
Everything is computed once per process (`KeyDocs.load`, cached).
"""

from __future__ import annotations

import inspect
import io
import re
import tokenize
import tomllib
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from pallas.config import GroupConfig

DOCS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"
ZH_FILE = Path(__file__).resolve().parents[1] / "config_zh.toml"
ANY_KEY = "*"  # a dict's key in a schema path (`models.*.input_price`)
_BARE = re.compile(r"^[A-Za-z0-9_-]+$")
_TABLE_LINE = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(?:#\s*(.*))?$")
_KEY_LINE = re.compile(r"^\s*([A-Za-z0-9_\-.\"]+)\s*=\s*.+?\s#\s*(.+)$")


def quote_part(part: str) -> str:
    """A TOML key part as written in a file: bare when it can be, quoted otherwise."""
    return part if _BARE.match(part) else '"' + part.replace('"', '\\"') + '"'


def dotted(parts: tuple[str, ...] | list[str]) -> str:
    return ".".join(quote_part(p) for p in parts)


def _submodel(annotation: Any) -> tuple[type[BaseModel] | None, bool]:
    """(the model a field holds, whether it holds it under dict keys)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation, False
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (dict, Mapping) and len(args) == 2:
        inner, _ = _submodel(args[1])
        return inner, True
    if origin in (typing.Union, types.UnionType):
        for arg in args:
            inner, keyed = _submodel(arg)
            if inner is not None:
                return inner, keyed
    return None, False


def _first_sentence(text: str | None) -> str:
    if not text:
        return ""
    line = " ".join(text.strip().split("\n\n")[0].split())
    return line if len(line) <= 160 else line[:157] + "…"


def source_notes(model: type[BaseModel]) -> dict[str, str]:
    """field name → the comment on its line (or right above it) in the class source."""
    notes: dict[str, str] = {}
    for klass in reversed(model.__mro__):
        if isinstance(klass, type) and issubclass(klass, BaseModel) and klass is not BaseModel:
            notes.update(_class_notes(klass))
    return notes


@cache
def _class_notes(klass: type[BaseModel]) -> dict[str, str]:
    try:
        source = inspect.getsource(klass)
    except (OSError, TypeError):
        return {}
    notes: dict[str, str] = {}
    trailing: set[str] = set()
    above: list[str] = []
    field: str | None = None
    body_col: int | None = None
    last_line = 0
    tokens = tokenize.generate_tokens(io.StringIO(inspect.cleandoc("\n" + source)).readline)
    for tok in tokens:
        if tok.type == tokenize.INDENT and body_col is None:
            body_col = len(tok.string)
        elif tok.type == tokenize.COMMENT:
            text = tok.string.lstrip("#").strip()
            if field is not None and field not in trailing and text:
                notes[field] = text  # the trailing comment wins over a block above
                trailing.add(field)
            elif field is None:
                above = [*above, text] if tok.start[0] == last_line + 1 and above else [text]
                last_line = tok.start[0]
        elif tok.type == tokenize.NAME and tok.start[1] == body_col and field is None:
            field = tok.string
            if _describes(above) and last_line == tok.start[0] - 1:
                notes[field] = " ".join(above)
            above = []
        elif tok.type in (tokenize.NEWLINE, tokenize.DEDENT):
            field = None
    return {k: v for k, v in notes.items() if k in klass.model_fields}


def _describes(block: list[str]) -> bool:
    """A comment block above a field describes it; a one- or two-word line (`# switches`,
    `# reply shape`) heads a group of fields and describes none of them."""
    return len(block) > 1 or len(" ".join(block).split()) >= 3


def docs_notes(page: Path = DOCS_PAGE) -> dict[tuple[str, ...], str]:
    """(key parts as written) → the trailing comment in the page's ```toml blocks."""
    if not page.exists():
        return {}
    out: dict[tuple[str, ...], str] = {}
    text = page.read_text(encoding="utf-8")
    for block in (part.split("```")[0] for part in text.split("```toml")[1:]):
        table: tuple[str, ...] = ()
        previous = ""  # the last comment seen: a comment continuing it describes no key
        for line in block.splitlines():
            note = line.partition(" #")[2].strip()
            continued = previous.endswith((",", "…", "—")) or note.startswith("…")
            previous = note or previous
            head = _TABLE_LINE.match(line)
            if head:
                table = _split_key(head.group(1))
                if head.group(2) and not head.group(2).rstrip().endswith((",", "…")):
                    out.setdefault(table, head.group(2).strip())
                continue
            key = _KEY_LINE.match(line)
            if key and not continued:
                out.setdefault(table + _split_key(key.group(1)), key.group(2).strip())
    return out


def _split_key(key: str) -> tuple[str, ...]:
    parts = re.findall(r'"((?:[^"\\]|\\.)*)"|([A-Za-z0-9_-]+)', key)
    return tuple(quoted or bare for quoted, bare in parts)


@cache
def chinese_notes(path: Path = ZH_FILE) -> dict[tuple[str, ...], str]:
    """Schema path → its Chinese description (`pallas/config_zh.toml`)."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return {tuple(key.split(".")): str(text) for key, text in data.items()}


@dataclass(frozen=True, slots=True)
class KeyDocs:
    """Descriptions by schema path (dict keys as `*`): keys and their tables, the Chinese one
    where there is one (`zh`), the English note of the source otherwise."""

    keys: Mapping[tuple[str, ...], str]
    tables: Mapping[tuple[str, ...], str]
    zh: Mapping[tuple[str, ...], str] = field(default_factory=dict)
    english: Mapping[tuple[str, ...], str] = field(default_factory=dict)

    def english_key(self, parts: tuple[str, ...]) -> str:
        path = schema_path(parts)
        return self.english.get(path, "") if path is not None else ""

    @staticmethod
    @cache
    def load() -> KeyDocs:
        keys: dict[tuple[str, ...], str] = {}
        tables: dict[tuple[str, ...], str] = {}
        _walk(GroupConfig, (), keys, tables)
        for parts, note in docs_notes().items():
            path = schema_path(parts)
            if path is None:
                continue
            target = tables if path in tables or _is_table(path) else keys
            if not target.get(path):
                target[path] = note
        zh = chinese_notes()
        english = {**tables, **keys}
        return KeyDocs(
            {p: zh.get(p) or note for p, note in keys.items()},
            {p: zh.get(p) or note for p, note in tables.items()},
            zh,
            english,
        )

    @staticmethod
    def schema_paths() -> tuple[set[tuple[str, ...]], set[tuple[str, ...]]]:
        """Every key and every table the config models declare (the Chinese file's test)."""
        keys: dict[tuple[str, ...], str] = {}
        tables: dict[tuple[str, ...], str] = {}
        _walk(GroupConfig, (), keys, tables)
        return set(keys), set(tables)

    def key(self, parts: tuple[str, ...]) -> str:
        path = schema_path(parts)
        return self.keys.get(path, "") if path is not None else ""

    def table(self, parts: tuple[str, ...]) -> str:
        path = schema_path(parts)
        if path is None:
            return ""
        return self.tables.get(path, "") or self.keys.get(path, "")


def _walk(
    model: type[BaseModel],
    prefix: tuple[str, ...],
    keys: dict[tuple[str, ...], str],
    tables: dict[tuple[str, ...], str],
) -> None:
    notes = source_notes(model)
    for name, info in model.model_fields.items():
        path = (*prefix, name)
        note = _first_sentence(info.description) or notes.get(name, "")
        inner, keyed = _submodel(info.annotation)
        if inner is None:
            keys[path] = note
            continue
        table = (*path, ANY_KEY) if keyed else path
        tables[path] = note or _first_sentence(inner.__doc__)
        if keyed:
            tables[table] = _first_sentence(inner.__doc__) or note
        _walk(inner, table, keys, tables)


@cache
def _is_table(path: tuple[str, ...]) -> bool:
    return _model_at(path) is not None


def _model_at(path: tuple[str, ...]) -> type[BaseModel] | None:
    model: type[BaseModel] | None = GroupConfig
    keyed = False
    for part in path:
        if model is None:
            return None
        if keyed:
            keyed = False
            continue
        info = model.model_fields.get(part)
        if info is None:
            return None
        model, keyed = _submodel(info.annotation)
    return None if keyed else model


def schema_path(parts: tuple[str, ...]) -> tuple[str, ...] | None:
    """`("models", "gpt-4o-mini", "input_price")` → `("models", "*", "input_price")`;
    None for a key no model declares."""
    out: list[str] = []
    model: type[BaseModel] | None = GroupConfig
    keyed = False
    for part in parts:
        if keyed:
            out.append(ANY_KEY)
            keyed = False
            continue
        if model is None:
            return None  # inside a plain dict / list value
        info = model.model_fields.get(part)
        if info is None:
            return None
        out.append(part)
        model, keyed = _submodel(info.annotation)
    return tuple(out)


@dataclass(frozen=True, slots=True)
class DescribedKey:
    key: str  # the full dotted key, as the edit and reset forms take it
    name: str  # the key inside its table
    value: Any
    origin: str
    description: str
    english: str = ""  # the source's English note (a tooltip)

    @property
    def origin_zh(self) -> str:
        """Where the value comes from, as the operator reads it."""
        return origin_zh(self.origin)


ORIGIN_ZH = {"built-in": "内置默认", "default.toml": "default.toml"}


def origin_zh(origin: str) -> str:
    """`built-in` → 内置默认, `default.toml` stays, a group's own file → 本群文件."""
    return ORIGIN_ZH.get(origin, "本群文件" if origin.endswith(".toml") else origin)


@dataclass(frozen=True, slots=True)
class KeyGroup:
    """One TOML table of the merged config, as one collapsible section of the page."""

    table: str  # "" for the top-level keys
    description: str
    keys: tuple[DescribedKey, ...]
    changed: int  # keys this group's own file sets


def group_keys(
    rows: Any, *, group_file: str, query: str = "", docs: KeyDocs | None = None
) -> list[KeyGroup]:
    """Origin rows (`key`, `value`, `origin`) grouped by table, described, filtered by `query`
    (matched against the key and its description, case-insensitively)."""
    docs = docs or KeyDocs.load()
    needle = query.strip().lower()
    tables: dict[tuple[str, ...], list[DescribedKey]] = {}
    for row in rows:
        parts = _split_key(row.key) if row.key else ()
        note = docs.key(parts)
        english = docs.english_key(parts)
        searched = f"{row.key}\n{note}\n{english}".lower()
        if needle and needle not in searched:
            continue
        described = DescribedKey(
            row.key, quote_part(parts[-1]), row.value, row.origin, note, english
        )
        tables.setdefault(parts[:-1], []).append(described)
    return [
        KeyGroup(
            dotted(table),
            docs.table(table),
            tuple(keys),
            sum(1 for k in keys if k.origin == group_file),
        )
        for table, keys in sorted(tables.items())
    ]


REFERENCE_START = "<!-- config-keys:start (generated from pallas/config_zh.toml) -->"
REFERENCE_END = "<!-- config-keys:end -->"
PIPE = "\\|"  # a | inside a table cell


def reference_table(zh: Mapping[tuple[str, ...], str] | None = None) -> str:
    """Every key and table with its Chinese description, as docs/configuration.md lists them
    (between `REFERENCE_START` and `REFERENCE_END`; the console reads the same file)."""
    notes = chinese_notes() if zh is None else zh
    rows = ["| 键 | 说明 |", "| --- | --- |"]
    for path in sorted(notes):
        shown = ".".join(path).replace("|", PIPE)
        text = notes[path].replace("|", PIPE)
        rows.append(f"| `{shown}` | {text} |")
    return "\n".join([REFERENCE_START, *rows, REFERENCE_END])


def with_reference(page: str) -> str:
    """docs/configuration.md with its generated key table replaced (or appended)."""
    table = reference_table()
    if REFERENCE_START in page and REFERENCE_END in page:
        head, rest = page.split(REFERENCE_START, 1)
        return head + table + rest.split(REFERENCE_END, 1)[1]
    return page.rstrip("\n") + "\n\n## 全部配置项\n\n" + table + "\n"


if __name__ == "__main__":  # python -m pallas.web.config_docs: rewrite the docs' key table
    DOCS_PAGE.write_text(with_reference(DOCS_PAGE.read_text(encoding="utf-8")), encoding="utf-8")
