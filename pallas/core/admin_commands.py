"""Admin commands as plain functions: `/pallas <name> [args]` in a group, text back.

A command is written against the services it reads (`AdminCommand[S]`): a feature slice's
commands take the slice's own services (e.g. the memory service and a getter of the group's
`[memory]` slice), never the whole app. The admin registry (`pallas.admin`) binds each one to
the app's `AdminServices` with `AdminCommand.bind`; the NoneBot plugin, the CLI and the web
console run the bound commands. Replies are plain text for the group.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeAlias, TypeVar

S = TypeVar("S")  # the services a command reads
T = TypeVar("T")  # the wider services it is bound to


@dataclass(frozen=True, slots=True)
class AdminContext(Generic[S]):
    """One `/pallas …` invocation: who typed it where, its arguments and the services."""

    services: S
    bot_id: int
    group_id: int
    user_id: int
    args: tuple[str, ...]
    reply_to: int | None = None  # message id the admin quoted, if any

    def over(self, services: T) -> AdminContext[T]:
        """The same invocation over other services (what a bound command hands on)."""
        return AdminContext(
            services, self.bot_id, self.group_id, self.user_id, self.args, self.reply_to
        )


AdminHandler: TypeAlias = Callable[[AdminContext[S]], Awaitable[str]]


@dataclass(frozen=True, slots=True)
class AdminCommand(Generic[S]):
    name: str
    usage: str
    summary: str
    handler: AdminHandler[S]

    def bind(self, pick: Callable[[T], S]) -> AdminCommand[T]:
        """This command over wider services `T`: `pick` hands it the part it reads."""
        handler = self.handler

        async def bound(cmd: AdminContext[T]) -> str:
            return await handler(cmd.over(pick(cmd.services)))

        return AdminCommand(self.name, self.usage, self.summary, bound)


def slash_command_words(text: str, command: str = "pallas") -> list[str] | None:
    """The words after "/<command>" at the start of `text` ("/pallas why 3" → ["why", "3"]),
    None when it is not that command. Pallas's own commands answer to "/" whatever NoneBot's
    `COMMAND_START` is (an operator's ["!"] for their plugins must not lock the admins out)."""
    words = text.split()
    if not words or words[0] != f"/{command}":
        return None
    return words[1:]
