"""Admin command registry: every `/pallas …` command, bound to the app's `AdminServices`.

The `inspect` commands (status, why, context) read the whole app; each feature slice's
commands are written against the slice's own services and bound here to the part of
`AdminServices` they read (`AdminCommand.bind`), in the order `/pallas help` lists them.
"""

from __future__ import annotations

from pallas.admin import inspect
from pallas.admin.base import AdminCtx, AdminServices, AppCommand
from pallas.core.admin_commands import AdminCommand, AdminContext, AdminHandler
from pallas.features.learning import LEARNING_COMMANDS, LearningAdmin
from pallas.features.memory_commands import MEMORY_COMMANDS, MemoryAdmin
from pallas.features.reminders import REMINDER_COMMANDS, ReminderAdmin
from pallas.features.stickers import STICKER_COMMANDS, StickerAdmin
from pallas.features.svars import SVAR_COMMANDS, SvarAdmin
from pallas.features.tools import TOOL_COMMANDS, PendingCalls, ToolAdmin


def learning_admin(services: AdminServices) -> LearningAdmin:
    return LearningAdmin(
        learning=services.learning,
        feedback=services.feedback,
        insight=services.insight,
        clock=services.clock,
        flush=services.writer.flush,
        config=lambda group_id: services.group_config(group_id).learning,
    )


def memory_admin(services: AdminServices) -> MemoryAdmin:
    return MemoryAdmin(services.memory, lambda group_id: services.group_config(group_id).memory)


def svar_admin(services: AdminServices) -> SvarAdmin:
    return SvarAdmin(services.svars, lambda group_id: services.group_config(group_id).svars)


def sticker_admin(services: AdminServices) -> StickerAdmin:
    return StickerAdmin(
        services.stickers,
        services.describer,
        lambda group_id: services.group_config(group_id).chat.allow_sticker,
    )


def reminder_admin(services: AdminServices) -> ReminderAdmin:
    return ReminderAdmin(services.reminders, services.clock)


def tool_admin(services: AdminServices) -> ToolAdmin:
    return ToolAdmin(
        services.mcp,
        PendingCalls(services.state),
        services.clock,
        lambda group_id: services.group_config(group_id).tools.mcp,
    )


ALL_COMMANDS: list[AppCommand] = [
    *inspect.COMMANDS,  # /pallas status, why, context
    *(c.bind(learning_admin) for c in LEARNING_COMMANDS),  # /pallas learn, /pallas feedback
    *(c.bind(memory_admin) for c in MEMORY_COMMANDS),  # /pallas memory list|add|del|forget
    *(c.bind(svar_admin) for c in SVAR_COMMANDS),  # /pallas svar list|set|reset
    *(c.bind(sticker_admin) for c in STICKER_COMMANDS),  # /pallas sticker list|ban|…
    *(c.bind(tool_admin) for c in TOOL_COMMANDS),  # /pallas tool [confirm|deny CODE]
    *(c.bind(reminder_admin) for c in REMINDER_COMMANDS),  # /pallas reminders [recent|cancel]
]


def find_command(name: str) -> AppCommand | None:
    return next((c for c in ALL_COMMANDS if c.name == name), None)


def _handler(name: str) -> AdminHandler[AdminServices]:
    command = find_command(name)
    assert command is not None, name
    return command.handler


# run by the web console (`memory`) and `pallas learn` (`learn`) outside a group message
memory_command = _handler("memory")
learn_command = _handler("learn")


def help_text() -> str:
    return "\n".join(f"{c.usage} — {c.summary}" for c in ALL_COMMANDS)


__all__ = [
    "ALL_COMMANDS",
    "AdminCommand",
    "AdminContext",
    "AdminCtx",
    "AdminServices",
    "AppCommand",
    "find_command",
    "help_text",
    "learn_command",
    "learning_admin",
    "memory_admin",
    "memory_command",
    "reminder_admin",
    "sticker_admin",
    "svar_admin",
    "tool_admin",
]
