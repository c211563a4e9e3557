"""Console worldbook changes: import a SillyTavern JSON book, switch a book on / off per group.

An upload is size-capped, its file name reduced to a plain safe name, its content parsed by the
worldbook feature's own loader (a book with no usable entry is refused) and then written
atomically under `config/worldbooks/`. Per group, a book is on when the group config's
`[worldbook] books` names it; the switch edits that list through `config_edit.edit_document`
(validated, comments kept), like every other config change.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import tomlkit
from tomlkit.items import Table

from pallas.config import GroupConfig
from pallas.features.worldbook import book_file_name, parse_worldbook_json
from pallas.web.config_edit import ConfigRejected, edit_document, write_atomic

MAX_UPLOAD_BYTES = 2_000_000
MAX_NAME_CHARS = 64


@dataclass(frozen=True, slots=True)
class BookRow:
    name: str  # the name groups use in `[worldbook] books` (the file stem)
    entries: int
    format: str
    problems: tuple[str, ...]  # entries skipped or why the file does not load
    groups: tuple[int, ...]  # groups whose config turns it on


@dataclass(frozen=True, slots=True)
class Imported:
    name: str
    entries: int
    skipped: tuple[str, ...]


def safe_book_name(file_name: str) -> str:
    """An uploaded file's name as a plain book name: no folders, no dots in front, only letters,
    digits (CJK too), `-` and `_`; ConfigRejected when nothing is left."""
    stem = Path(file_name.replace("\\", "/")).name
    stem = stem[:-5] if stem.lower().endswith(".json") else stem
    name = re.sub(r"[^\w-]+", "_", stem).strip("_-")[:MAX_NAME_CHARS]
    if not name:
        raise ConfigRejected(f"文件名「{file_name}」里没有可用的字符，请改成字母、数字或中文")
    return name


def import_book(directory: Path, file_name: str, data: bytes, *, replace: bool) -> Imported:
    """Validate an uploaded SillyTavern world-info (or V2 character-book) JSON and store it."""
    if len(data) > MAX_UPLOAD_BYTES:
        raise ConfigRejected(f"文件太大：最多 {MAX_UPLOAD_BYTES // 1_000_000} MB")
    name = safe_book_name(file_name)
    path = directory / f"{name}.json"
    if path.exists() and not replace:
        raise ConfigRejected(f"已经有名为「{name}」的世界书；勾选“替换同名”才会覆盖")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigRejected("文件不是 UTF-8 文本") from exc
    result = parse_worldbook_json(text, book=name, source=f"{name}.json")
    if result.format == "unknown" or not result.entries:
        why = "；".join(str(e) for e in result.errors[:3]) or "没有条目"
        raise ConfigRejected(f"不是可用的 SillyTavern 世界书 JSON（{why}）")
    write_atomic(path, text)
    return Imported(name, len(result.entries), tuple(str(e) for e in result.errors))


def books_by_group(groups_dir: Path) -> dict[int, tuple[str, ...]]:
    """Each group file's `[worldbook] books`, as file names (`lore.json`)."""
    out: dict[int, tuple[str, ...]] = {}
    for path in sorted(groups_dir.glob("*.toml")):
        if not path.stem.isdigit():
            continue
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError):
            continue
        section = data.get("worldbook")
        books = section.get("books") if isinstance(section, dict) else None
        if isinstance(books, list):
            out[int(path.stem)] = tuple(
                f for b in books if isinstance(b, str) and (f := book_file_name(b))
            )
    return out


def list_books(directory: Path, groups_dir: Path) -> list[BookRow]:
    users = books_by_group(groups_dir)
    rows = []
    for path in sorted(directory.glob("*.json")):
        try:
            text = path.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            rows.append(BookRow(path.stem, 0, "unknown", (f"无法读取：{exc}",), ()))
            continue
        result = parse_worldbook_json(text, book=path.stem, source=path.name)
        groups = tuple(g for g, books in users.items() if path.name in books)
        problems = tuple(str(e) for e in result.errors)
        rows.append(BookRow(path.stem, len(result.entries), result.format, problems, groups))
    return rows


def group_books(config: GroupConfig) -> tuple[str, ...]:
    """The group's books as file names."""
    return tuple(f for b in config.worldbook.books if (f := book_file_name(b)))


def set_book(groups_dir: Path, group_id: int, name: str, *, on: bool) -> list[str]:
    """Add the book to (or drop it from) the group's `[worldbook] books`; the new list."""
    wanted = book_file_name(name)
    if wanted is None:
        raise ConfigRejected(f"世界书名「{name}」不合法")
    if on and not (groups_dir.parent / "worldbooks" / wanted).is_file():
        raise ConfigRejected(f"世界书「{name}」不存在")
    result: list[str] = []

    def change(doc: tomlkit.TOMLDocument) -> None:
        if "worldbook" not in doc:
            doc["worldbook"] = tomlkit.table()
        table = doc["worldbook"]
        if not isinstance(table, Table):
            raise ConfigRejected("worldbook 不是一个表")
        books = [str(b) for b in table.get("books", [])]
        kept = [b for b in books if book_file_name(b) != wanted]
        result[:] = [*kept, name] if on else kept
        table["books"] = result

    edit_document(groups_dir, group_id, change)
    return result


def enabled_flags(books: Sequence[BookRow], on: Sequence[str]) -> dict[str, bool]:
    return {b.name: f"{b.name}.json" in on for b in books}
