"""What every local tool is made of: the call, the output, the run's environment, the protocol.

Its own module so the tools (calc, dice, …) and the registry that lists them both build on it
without importing each other both ways.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Protocol

from pallas.core.records import SpeakerCount


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool selected for a message: its name, parsed arguments and the span that selected it."""

    name: str
    args: tuple[tuple[str, str], ...] = ()
    matched: str = ""

    def arg(self, key: str, default: str = "") -> str:
        """The first value for `key`, else `default`."""
        return next((value for k, value in self.args if k == key), default)

    def arg_values(self, key: str) -> tuple[str, ...]:
        """Every value for a repeated `key`, in order (e.g. the options of `choose`)."""
        return tuple(value for k, value in self.args if k == key)


@dataclass(frozen=True, slots=True)
class ToolOutput:
    """A tool's result. `content` is one Chinese line (≤ 300 chars); `reason` is machine English."""

    name: str
    label: str
    content: str
    ok: bool
    reason: str = "ok"


class GroupActivityReader(Protocol):
    """Read-side of the group's message log (implemented by `MessageRepository`)."""

    async def speaker_counts(
        self, bot_id: int, group_id: int, *, since: float, until: float, limit: int
    ) -> list[SpeakerCount]: ...

    async def message_count(
        self, bot_id: int, group_id: int, *, since: float, until: float
    ) -> int: ...


@dataclass(frozen=True, slots=True)
class ToolEnv:
    """Everything a tool run may depend on; randomness and time come in here, never from globals."""

    bot_id: int
    group_id: int
    user_id: int
    now: float  # unix seconds
    rng: random.Random
    activity: GroupActivityReader | None = None


class Tool(Protocol):
    name: str
    label: str

    def match(self, text: str) -> ToolCall | None:
        """Pure: a `ToolCall` when `text` clearly asks for this tool, else None."""
        ...

    async def run(self, call: ToolCall, env: ToolEnv) -> ToolOutput:
        """Never raises for bad input: returns ok=False with a reason and a Chinese explanation."""
        ...


def failure(tool: Tool, reason: str, content: str) -> ToolOutput:
    """A failed run, in the shape every tool returns."""
    return ToolOutput(tool.name, tool.label, content, ok=False, reason=reason)


def success(tool: Tool, content: str, *, label: str = "") -> ToolOutput:
    return ToolOutput(tool.name, label or tool.label, content, ok=True, reason="ok")
