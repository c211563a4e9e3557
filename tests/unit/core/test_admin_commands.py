"""`AdminCommand.bind`: a slice's command runs over the part of the app's services it reads,
and the registry binds every slice's commands to the right part."""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import pytest

from pallas.admin import (
    ALL_COMMANDS,
    AdminServices,
    learning_admin,
    memory_admin,
    sticker_admin,
    svar_admin,
    tool_admin,
)
from pallas.core.admin_commands import AdminCommand, AdminContext


@dataclass(frozen=True)
class Slice:
    label: str


@dataclass(frozen=True)
class App:
    first: Slice
    second: Slice


async def _echo(cmd: AdminContext[Slice]) -> str:
    return (
        f"{cmd.services.label} {cmd.bot_id}/{cmd.group_id}/{cmd.user_id} {cmd.args} {cmd.reply_to}"
    )


ECHO = AdminCommand("echo", "/pallas echo", "回声", _echo)


@pytest.mark.parametrize(
    ("pick", "expected"),
    [
        (lambda app: app.first, "one 1/2/3 ('a', 'b') 9"),
        (lambda app: app.second, "two 1/2/3 ('a', 'b') 9"),
    ],
)
async def test_a_bound_command_reads_the_part_it_is_given(pick: Any, expected: str) -> None:
    bound = ECHO.bind(pick)
    cmd = AdminContext(App(Slice("one"), Slice("two")), 1, 2, 3, ("a", "b"), reply_to=9)
    assert (bound.name, bound.usage, bound.summary) == (ECHO.name, ECHO.usage, ECHO.summary)
    assert await bound.handler(cmd) == expected


def test_over_keeps_the_invocation_and_swaps_the_services() -> None:
    cmd = AdminContext("app", 1, 2, 3, ("x",), reply_to=4)
    assert cmd.over("slice") == AdminContext("slice", 1, 2, 3, ("x",), reply_to=4)


class _Configs:
    """`GroupConfigStore.get`: one config object per group id, remembered."""

    def __init__(self) -> None:
        self.seen: dict[int, SimpleNamespace] = {}

    def get(self, group_id: int) -> SimpleNamespace:
        return self.seen.setdefault(
            group_id,
            SimpleNamespace(
                memory=f"memory of {group_id}",
                svars=f"svars of {group_id}",
                learning=f"learning of {group_id}",
                chat=SimpleNamespace(allow_sticker=group_id == 7),
                tools=SimpleNamespace(mcp=f"mcp of {group_id}"),
            ),
        )


def _services() -> AdminServices:
    fields = AdminServices.__dataclass_fields__
    values: dict[str, Any] = {name: SimpleNamespace(name=name) for name in fields}
    values["configs"] = _Configs()
    values["writer"] = SimpleNamespace(flush=lambda: None)
    return AdminServices(**values)


SERVICES = _services()


@pytest.mark.parametrize(
    ("project", "attribute", "expected"),
    [
        (memory_admin, "service", SERVICES.memory),
        (svar_admin, "service", SERVICES.svars),
        (sticker_admin, "stickers", SERVICES.stickers),
        (sticker_admin, "describer", SERVICES.describer),
        (learning_admin, "learning", SERVICES.learning),
        (learning_admin, "feedback", SERVICES.feedback),
        (learning_admin, "insight", SERVICES.insight),
        (learning_admin, "clock", SERVICES.clock),
        (learning_admin, "flush", SERVICES.writer.flush),
        (tool_admin, "hub", SERVICES.mcp),
        (tool_admin, "clock", SERVICES.clock),
    ],
)
def test_each_slice_gets_the_app_service_it_reads(project: Any, attribute: str, expected: Any):
    assert getattr(project(SERVICES), attribute) is expected


@pytest.mark.parametrize(
    ("project", "getter", "group", "expected"),
    [
        (memory_admin, "config", 5, "memory of 5"),
        (svar_admin, "config", 5, "svars of 5"),
        (learning_admin, "config", 6, "learning of 6"),
        (sticker_admin, "allow_sticker", 7, True),
        (sticker_admin, "allow_sticker", 8, False),
        (tool_admin, "config", 9, "mcp of 9"),
    ],
)
def test_each_slice_reads_its_own_config_slice_of_the_group(
    project: Any, getter: str, group: int, expected: Any
) -> None:
    assert getattr(project(SERVICES), getter)(group) == expected


def test_the_registry_lists_every_command_once_in_help_order() -> None:
    names = [c.name for c in ALL_COMMANDS]
    assert names == [
        "status",
        "why",
        "context",
        "learn",
        "feedback",
        "memory",
        "svar",
        "sticker",
        "tool",
        "reminders",
    ]
