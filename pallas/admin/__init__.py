"""Admin command registry. Feature modules add their commands to `ALL_COMMANDS`."""

from __future__ import annotations

from pallas.admin import inspect
from pallas.admin.base import AdminCommand, AdminContext, AdminServices
from pallas.features.learning import admin as learning_admin
from pallas.features.memory import admin as memory_admin
from pallas.features.stickers import admin as sticker_admin
from pallas.features.svars import admin as svars_admin

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
