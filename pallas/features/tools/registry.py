"""Local, rule-selected tools for TOOL turns: the registry (values and protocols: `base`).

A TOOL turn is a member asking for something a small local tool answers exactly (dice, a choice,
arithmetic, date counting, today's group activity). Selection is pure and conservative: a tool
fires only when the whole (short) message is a clear request — `ToolRegistry.select` returns the
first allowed tool, in registry order, whose `match` fires. Running is local (no network, a few
milliseconds); `ToolRegistry.run` never raises: unexpected exceptions become `reason="error"`,
overruns `reason="timeout"`. The result is shown to the model in the 【工具上下文】 block.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Collection, Sequence

from pallas.core.records import SpeakerCount
from pallas.features.tools._text import MAX_REQUEST_CHARS, one_line
from pallas.features.tools.activity import ActivityTool
from pallas.features.tools.base import (
    GroupActivityReader,
    Tool,
    ToolCall,
    ToolEnv,
    ToolOutput,
    failure,
    success,
)
from pallas.features.tools.calc import CalcTool
from pallas.features.tools.choose import ChooseTool
from pallas.features.tools.countdown import CountdownTool
from pallas.features.tools.dice import DiceTool

__all__ = [
    "DEFAULT_TIMEOUT_SECONDS",
    "GroupActivityReader",
    "SpeakerCount",
    "Tool",
    "ToolCall",
    "ToolEnv",
    "ToolOutput",
    "ToolRegistry",
    "default_registry",
    "failure",
    "success",
]

log = logging.getLogger("pallas.tools")

DEFAULT_TIMEOUT_SECONDS = 2.0


class ToolRegistry:
    """An ordered set of tools; the order decides which tool wins when several would match."""

    def __init__(
        self, tools: Sequence[Tool], *, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
    ) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            if tool.name in self._tools:
                raise ValueError(f"duplicate tool name: {tool.name}")
            self._tools[tool.name] = tool
        self.timeout_seconds = timeout_seconds

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._tools)

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def select(self, text: str, allowed: Collection[str]) -> ToolCall | None:
        """The first allowed tool (registry order) whose `match` fires on `text`, else None."""
        if not text or len(text) > MAX_REQUEST_CHARS:
            return None
        for name, tool in self._tools.items():
            if name not in allowed:
                continue
            call = _safe_match(tool, text)
            if call is not None:
                return call
        return None

    async def run(
        self, call: ToolCall, env: ToolEnv, *, timeout_seconds: float | None = None
    ) -> ToolOutput:
        """Run `call` with a timeout; never raises (unknown tool, timeout, bug → ok=False)."""
        tool = self._tools.get(call.name)
        if tool is None:
            return ToolOutput(call.name, call.name, "没有这个工具", ok=False, reason="unknown_tool")
        seconds = self.timeout_seconds if timeout_seconds is None else timeout_seconds
        try:
            async with asyncio.timeout(seconds):
                output = await tool.run(call, env)
        except TimeoutError:
            log.warning("tool %s timed out after %.1fs", tool.name, seconds)
            return failure(tool, "timeout", "工具超时了，没算出来")
        except Exception:
            log.exception("tool %s failed on %r", tool.name, call.matched)
            return failure(tool, "error", "工具出错了，没算出来")
        return _tidy(output)


def _safe_match(tool: Tool, text: str) -> ToolCall | None:
    try:
        return tool.match(text)
    except Exception:
        log.exception("tool %s match failed", tool.name)
        return None


def _tidy(output: ToolOutput) -> ToolOutput:
    """Enforce the one-line, ≤ 300-char content contract whatever the tool returned."""
    content = one_line(output.content)
    if content == output.content:
        return output
    return ToolOutput(output.name, output.label, content, output.ok, output.reason)


def default_registry(*, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS) -> ToolRegistry:
    """calc, dice, choose, countdown, activity — in that order."""
    return ToolRegistry(
        [CalcTool(), DiceTool(), ChooseTool(), CountdownTool(), ActivityTool()],
        timeout_seconds=timeout_seconds,
    )
