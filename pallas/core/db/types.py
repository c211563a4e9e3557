"""The models' text column types: SQLAlchemy's `String` and `Text`, storable on any backend.

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
"""

from __future__ import annotations

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
