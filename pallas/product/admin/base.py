"""Admin commands as plain functions: `/pallas <name> [args]` in a group, text back.

The NoneBot plugin only checks permission and dispatches; every command is a core function
over the runtime, so the same logic backs the CLI and tests.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pallas.runtime import PallasRuntime

if TYPE_CHECKING:
    from pallas.product.llm.memory.service import MemoryService


@dataclass(frozen=True, slots=True)
class AdminContext:
    runtime: PallasRuntime
    bot_id: int
    group_id: int
    user_id: int
    args: tuple[str, ...]
    reply_to: int | None = None  # message id the admin quoted, if any
    memory: MemoryService | None = None  # the app's one memory service (None: CLI / tests)


AdminHandler = Callable[[AdminContext], Awaitable[str]]


@dataclass(frozen=True, slots=True)
class AdminCommand:
    name: str
    usage: str
    summary: str
    handler: AdminHandler
