"""The models' own column types: `String` and `Text` storable on any backend, and vectors.

The models import `String` and `Text` from here, not from SQLAlchemy. The schema is the same
(`VARCHAR(n)` / `TEXT`; migrations and autogenerate see SQLAlchemy's types), but every value
bound to such a column — inserted, updated, or compared in a WHERE — is first cleaned:

- U+0000 is removed. PostgreSQL `text` cannot hold it ("invalid byte sequence for encoding
  UTF8: 0x00") while SQLite can, so the same chat message was stored on one backend and refused
  on the other — and the message writer retries a refused batch, blocking all recording.
- Lone UTF-16 surrogates (a QQ card or message cut in the middle of an emoji) become U+FFFD,
  and a surrogate pair left as two code points is joined. Neither driver can encode them
  ("surrogates not allowed"), on either backend.

Clean text is returned unchanged (ASCII takes a fast path). JSON columns need neither: the JSON
encoder escapes both (`\\u0000`, `\\ud83d`) and both backends store the escapes as they are.

`Float32Vector` stores a vector as float32 little-endian bytes (BLOB / bytea): 4 bytes a
dimension, 2 KB for the sentence encoder's 512, against ~4.3 KB as a JSON list of 4-decimal
numbers (memory_item.embedding; migration 0019 converted the JSON ones). A vector is compared as
float32 anyway (`pallas.ranking.vector_index`), so nothing a ranking sees is lost.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator


def storable_text(value: str) -> str:
    """`value` without U+0000 and with lone surrogates replaced (see the module docstring)."""
    if value.isascii():
        return value.replace("\x00", "") if "\x00" in value else value
    if "\x00" in value:
        value = value.replace("\x00", "")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        value = value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return value


class Text(TypeDecorator[str]):
    """`sa.Text` whose bound values go through `storable_text`."""

    impl = sa.Text
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Dialect) -> Any:
        return storable_text(value) if isinstance(value, str) else value


class String(Text):
    """`sa.String(n)` whose bound values go through `storable_text`."""

    impl = sa.String  # type: ignore[assignment]  # a String, not the Text base
    cache_ok = True


def vector_bytes(vector: Sequence[float]) -> bytes:
    """`vector` as float32 little-endian bytes (`Float32Vector`'s stored form)."""
    packed = array("f", vector)
    if sys.byteorder == "big":
        packed.byteswap()
    return packed.tobytes()


def vector_from_bytes(data: bytes) -> list[float]:
    """The vector `vector_bytes` stored (each value as its float32 is read back)."""
    unpacked = array("f")
    unpacked.frombytes(data)
    if sys.byteorder == "big":
        unpacked.byteswap()
    return unpacked.tolist()


class Float32Vector(TypeDecorator[list[float]]):
    """A vector stored as float32 little-endian bytes (see the module docstring)."""

    impl = sa.LargeBinary
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Dialect) -> bytes | None:
        return None if value is None else vector_bytes(value)

    def process_result_value(self, value: Any, dialect: Dialect) -> list[float] | None:
        return None if value is None else vector_from_bytes(bytes(value))
