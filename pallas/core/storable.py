"""Values every later step can rely on: text a hash and both databases take, ints that fit.

A OneBot frame is JSON from an implementation Pallas does not control. JSON can carry what
neither database nor `str.encode("utf-8")` accepts:

- **lone surrogates** (`"\\ud800"`, half of an emoji cut by a broken client): Python's `json`
  decodes them into a `str` that cannot be encoded as UTF-8 (a hash, SQLite and PostgreSQL all
  refuse it). Each one becomes U+FFFD, the replacement character — what a UTF-8 decoder shows
  for a broken sequence; a valid pair was already joined into its character by the decoder.
- **NUL** (`"\\u0000"`): PostgreSQL refuses it in text. It is removed (it has no glyph).
- **NaN / Infinity** (Python's `json` reads them; PostgreSQL's JSON does not): become null.
- **integers past 64 bits** (a quoted message id of 30 digits, a face id of 2**70): both
  databases refuse them in an INTEGER column and PostgreSQL in nothing else, but a later step
  may move a value from the segment JSON into a column (`reply_to`). Inside a message's data
  they become their decimal string, which says the same and stores anywhere.

`storable_value` applies this to a whole parsed frame; `needs_cleaning` is the cheap look at the
raw frame text that tells whether any of it can be there (a frame that passes it is left alone:
the common case costs one regex search).
"""

from __future__ import annotations

import math
import re
from typing import Any

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
REPLACEMENT = "\ufffd"

_SURROGATE_OR_NUL = re.compile("[\ud800-\udfff\x00]")
# in raw JSON text: an escaped surrogate or NUL, a raw one (a str frame built in-process),
# NaN / Infinity, or a run of 19+ digits (an integer that may not fit in 64 bits)
_RAW_SUSPECT = re.compile(r"\\u[dD][89a-fA-F]|\\u0000|[\ud800-\udfff\x00]|NaN|Infinity|\d{19,}")


def storable_text(text: str) -> str:
    """`text` with each lone surrogate as U+FFFD and NUL removed (see the module doc)."""
    if _SURROGATE_OR_NUL.search(text) is None:
        return text
    return _SURROGATE_OR_NUL.sub(lambda m: "" if m.group() == "\x00" else REPLACEMENT, text)


def fits_int64(value: object) -> bool:
    return type(value) is int and INT64_MIN <= value <= INT64_MAX


def storable_value(value: Any) -> Any:
    """A parsed JSON value with every string `storable_text`, every non-finite float null and
    every integer past 64 bits its decimal string; containers copied only when changed."""
    if isinstance(value, str):
        return storable_text(value)
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return value if INT64_MIN <= value <= INT64_MAX else str(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, list):
        cleaned = [storable_value(item) for item in value]
        return value if all(a is b for a, b in zip(cleaned, value, strict=True)) else cleaned
    if isinstance(value, dict):
        pairs = [(storable_value(k), storable_value(v)) for k, v in value.items()]
        if all(k is k0 and v is v0 for (k, v), (k0, v0) in zip(pairs, value.items(), strict=True)):
            return value
        return dict(pairs)
    return value


def needs_cleaning(raw: str | bytes) -> bool:
    """Whether the raw frame may hold something `storable_value` changes (may err towards
    yes: a 20-digit run inside a file name walks the frame for nothing)."""
    text = raw if isinstance(raw, str) else raw.decode("utf-8", "replace")
    return _RAW_SUSPECT.search(text) is not None


__all__ = [
    "INT64_MAX",
    "INT64_MIN",
    "REPLACEMENT",
    "fits_int64",
    "needs_cleaning",
    "storable_text",
    "storable_value",
]
