"""Admin command registry. Feature modules add their commands to `ALL_COMMANDS`."""

from __future__ import annotations

from pallas.product.admin import inspect
from pallas.product.admin import learning as learning_admin
from pallas.product.admin import memory as memory_admin
from pallas.product.admin import stickers as sticker_admin
from pallas.product.admin import svars as svars_admin
from pallas.product.admin.base import AdminCommand, AdminContext, AdminServices

ALL_COMMANDS: list[AdminCommand] = [*inspect.COMMANDS]
ALL_COMMANDS += learning_admin.COMMANDS  # /pallas learn, /pallas feedback
ALL_COMMANDS += memory_admin.COMMANDS  # /pallas memory list|add|del|forget
ALL_COMMANDS += svars_admin.COMMANDS  # /pallas svar list|set|reset
ALL_COMMANDS += sticker_admin.COMMANDS  # /pallas sticker list|ban|unban|delete|describe


def find_command(name: str) -> AdminCommand | None:
    return next((c for c in ALL_COMMANDS if c.name == name), None)


def help_text() -> str:
    return "\n".join(f"{c.usage} — {c.summary}" for c in ALL_COMMANDS)


__all__ = [
    "ALL_COMMANDS",
    "AdminCommand",
    "AdminContext",
    "AdminServices",
    "find_command",
    "help_text",
]
