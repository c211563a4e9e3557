"""Chunk a folder of `.md` / `.txt` files into knowledge rows of one pool.

Chunking: files are split into paragraphs (blank lines; Markdown headings start a new
paragraph and are remembered as the chunk's title), paragraphs are packed into chunks of at
most `max_chars` (the memory store's row cap), and a paragraph longer than that is cut at
sentence ends. Each chunk is keyed `<file stem>_<n>` so a re-import replaces the file's rows
in place and `static` placeholders can name a file.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pallas.features.attachments import decode_text

EXTENSIONS = (".md", ".txt")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$")
_SENTENCE = re.compile(r"(?<=[。！？!?；;\n])")


@dataclass(frozen=True, slots=True)
class Chunk:
    key: str
    text: str
    file: str
    index: int


def _paragraphs(text: str) -> Iterator[tuple[str, str]]:
    """(title, paragraph) pairs; the title is the nearest Markdown heading above."""
    title = ""
    buf: list[str] = []
    for line in text.replace("\r\n", "\n").split("\n"):
        heading = _HEADING.match(line)
        if heading or not line.strip():
            if buf:
                yield title, " ".join(buf)
                buf = []
            if heading:
                title = heading.group(1).strip()
            continue
        buf.append(line.strip())
    if buf:
        yield title, " ".join(buf)


def _pieces(paragraph: str, limit: int) -> Iterator[str]:
    if len(paragraph) <= limit:
        yield paragraph
        return
    current = ""
    for sentence in (s for s in _SENTENCE.split(paragraph) if s.strip()):
        while len(sentence) > limit:  # one huge sentence: hard cut
            if current:
                yield current
                current = ""
            yield sentence[:limit]
            sentence = sentence[limit:]
        if len(current) + len(sentence) > limit:
            yield current
            current = ""
        current += sentence
    if current.strip():
        yield current


def chunk_text(text: str, stem: str, *, max_chars: int = 300) -> list[Chunk]:
    chunks: list[Chunk] = []
    current, current_title = "", None

    def flush() -> None:
        nonlocal current
        if current.strip():
            n = len(chunks) + 1
            chunks.append(Chunk(f"{stem}_{n}", current.strip(), stem, n))
        current = ""

    for title, paragraph in _paragraphs(text):
        prefix = f"{title}：" if title else ""
        room = max_chars - len(prefix)
        for piece in _pieces(paragraph, max(room, 40)):
            if title != current_title or len(current) + len(piece) + 1 > max_chars:
                flush()
                current_title = title
                current = prefix
            current += ("" if current in ("", prefix) else " ") + piece
    flush()
    return chunks


def chunk_folder(folder: Path, *, max_chars: int = 300) -> list[Chunk]:
    """Every `.md` / `.txt` file under `folder` (sorted, recursive)."""
    out: list[Chunk] = []
    for path in sorted(p for p in folder.rglob("*") if p.suffix.lower() in EXTENSIONS):
        if not path.is_file():
            continue
        text, _ = decode_text(path.read_bytes())
        out += chunk_text(text, path.stem, max_chars=max_chars)
    return out
