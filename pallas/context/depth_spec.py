"""Depth syntax of placed injections and worldbook entries ("3, 10~5"), and message insertion.

A depth counts messages from the end of the messages sequence: depth 0 is after the last
message (the current one), depth 1 just before it, depth N has N messages after it. A depth
larger than the sequence puts the injection at its start (SillyTavern does the same).

    "5"            one point
    "3, 10, 15"    several points (commas: ASCII or full-width; duplicates ignored)
    "10~5"         a loop: the 10th message back, then every 5 more (10, 15, 20, …) as far as
                   the sequence goes (at least the first point)
    "2, 10~5"      any mix of the above
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from pallas.core.errors import ConfigError

T = TypeVar("T")

_PART_RE = re.compile(r"^(\d{1,4})(?:\s*[~～]\s*(\d{1,4}))?$")
MAX_POINTS = 64


class DepthSyntaxError(ConfigError):
    pass


@dataclass(frozen=True, slots=True)
class DepthSpec:
    points: tuple[int, ...] = ()
    loops: tuple[tuple[int, int], ...] = ()  # (start, step)

    def resolve(self, message_count: int) -> tuple[int, ...]:
        """Concrete depths for a sequence of `message_count` messages, ascending."""
        depths = set(self.points)
        for start, step in self.loops:
            depth = start
            depths.add(depth)
            while step > 0 and depth + step <= message_count and len(depths) < MAX_POINTS:
                depth += step
                depths.add(depth)
        return tuple(sorted(depths))


def parse_depth(text: str | int) -> DepthSpec:
    """Parse the depth syntax; raises `DepthSyntaxError` naming the bad part."""
    if isinstance(text, int):
        if text < 0:
            raise DepthSyntaxError(f"depth {text} is negative")
        return DepthSpec(points=(text,))
    parts = [p.strip() for p in re.split(r"[,，]", text) if p.strip()]
    if not parts:
        raise DepthSyntaxError("empty depth")
    points: list[int] = []
    loops: list[tuple[int, int]] = []
    for part in parts:
        match = _PART_RE.match(part)
        if not match:
            raise DepthSyntaxError(f"bad depth {part!r} (use 5, 3, 10, 15 or 10~5)")
        if match.group(2) is None:
            points.append(int(match.group(1)))
            continue
        step = int(match.group(2))
        if step < 1:
            raise DepthSyntaxError(f"bad depth {part!r}: the step must be at least 1")
        loops.append((int(match.group(1)), step))
    return DepthSpec(tuple(dict.fromkeys(points)), tuple(dict.fromkeys(loops)))


def insert_at_depths(items: Sequence[T], placements: Sequence[tuple[int, T]]) -> list[T]:
    """`items` with each `(depth, item)` inserted at its depth (see the module docstring).

    Several insertions at one position keep the order of `placements`.
    """
    at: dict[int, list[T]] = {}
    for depth, item in placements:
        at.setdefault(max(0, len(items) - max(0, depth)), []).append(item)
    out: list[T] = []
    for pos in range(len(items) + 1):
        out.extend(at.get(pos, ()))
        if pos < len(items):
            out.append(items[pos])
    return out
