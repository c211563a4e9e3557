"""What a OneBot frame must look like before the adapter parses it (pure).

The adapter's receive loop (`nonebot.adapters.onebot.v11.Adapter._handle_ws`) ends — and the
socket closes, losing every frame queued behind it — on the first frame it cannot handle:
malformed JSON, a document nested thousands deep (RecursionError), an integer past Python's
4,300-digit conversion limit (ValueError), a non-object. `check_frame` is the pre-parse check
`GuardedAdapter` applies to each frame: a refused frame is logged and skipped, the connection
stays.

Cost: a length check, one C `json.loads` (integers through a length check) and a scan of the
bracket characters per frame; the exact depth walk runs only when that scan says the frame may
be deeper than `MAX_DEPTH` (brackets inside strings count in the scan, so it can only err
towards walking — except that closing brackets inside strings can hide depth from it; the
depth that would crash, about 1,000 levels, is caught by `json.loads` itself either way).
`benchmarks/crash_loss.py` prints the cost per frame.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from pallas.core.errors import InvalidInput

MAX_FRAME_BYTES = 4 * 1024 * 1024  # OneBot frames are events and API results: KiB, not MiB
MAX_DEPTH = 32  # a message event with a forwarded, quoted message array is < 10 deep
MAX_INT_DIGITS = 24  # ids and times are at most 20 digits (unsigned 64-bit)

_BRACKETS = re.compile(r"[\[\]{}]")


@dataclass(frozen=True, slots=True)
class FrameVerdict:
    ok: bool
    reason: str = "ok"  # "too_large" | "not_json" | "too_deep" | "int_too_long" | "not_object"
    size: int = 0


class _LongInteger(InvalidInput):
    pass


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise _LongInteger(text[:12])
    return int(text)


def _depth(value: Any, limit: int) -> int:
    """Nesting depth of a parsed document (iterative; stops counting past `limit`)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if not isinstance(node, (dict, list)):
            continue
        deepest = max(deepest, depth)
        if deepest > limit:
            return deepest
        children = node.values() if isinstance(node, dict) else node
        stack.extend((child, depth + 1) for child in children)
    return deepest


def _scan_depth(text: str) -> int:
    """Deepest bracket nesting by the bracket characters alone (strings not skipped)."""
    depth = deepest = 0
    for bracket in _BRACKETS.findall(text):
        depth += 1 if bracket in "[{" else -1
        deepest = max(deepest, depth)
    return deepest


def frame_size(data: str | bytes) -> int:
    if isinstance(data, bytes):
        return len(data)
    # a str is at most 4 bytes a character; encode only when that bound is over the cap
    return len(data) if len(data) * 4 <= MAX_FRAME_BYTES else len(data.encode("utf-8", "replace"))


def check_frame(
    data: str | bytes,
    *,
    max_bytes: int = MAX_FRAME_BYTES,
    max_depth: int = MAX_DEPTH,
) -> FrameVerdict:
    """Whether the adapter can safely parse and dispatch `data` (see the module docstring)."""
    size = frame_size(data)
    if size > max_bytes:
        return FrameVerdict(False, "too_large", size)
    try:
        value = json.loads(data, parse_int=_bounded_int)
    except _LongInteger:
        return FrameVerdict(False, "int_too_long", size)
    except RecursionError:
        return FrameVerdict(False, "too_deep", size)
    except ValueError:  # JSONDecodeError, UnicodeDecodeError, int conversion limits
        return FrameVerdict(False, "not_json", size)
    if not isinstance(value, dict):
        return FrameVerdict(False, "not_object", size)
    text = data if isinstance(data, str) else data.decode("utf-8", "replace")
    opening = text.count("[") + text.count("{")  # an upper bound of the depth
    if (
        opening > max_depth
        and _scan_depth(text) > max_depth
        and _depth(value, max_depth) > max_depth
    ):
        return FrameVerdict(False, "too_deep", size)
    return FrameVerdict(True, "ok", size)
