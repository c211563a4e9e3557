"""pallas.onebot.plugin_loading: the plugins pyproject.toml lists, loaded without one stopping
the bot."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from pallas.onebot.plugin_loading import guarded_hooks, listed_plugins, plugin_table, requirements

REPO = Path(__file__).resolve().parents[3]


def test_the_table_nb_cli_writes_and_pallas_plugins_env() -> None:
    table = {
        "plugins": {"nonebot-plugin-status": ["nonebot_plugin_status"], "@local": ["mine"]},
        "plugin_dirs": ["packages"],
    }
    env = {"PALLAS_PLUGINS": "nonebot_plugin_roll, nonebot_plugin_status"}
    assert listed_plugins(table, env) == ["nonebot_plugin_status", "mine", "nonebot_plugin_roll"]
    assert requirements(table) == ["nonebot-plugin-status"]
    assert listed_plugins({"plugins": ["legacy"]}, {}) == ["legacy"]


def test_the_projects_own_file_lists_the_scheduler() -> None:
    table = plugin_table(REPO / "pyproject.toml")
    assert "nonebot-plugin-apscheduler" in requirements(table)
    assert table["plugin_dirs"] == ["packages"]


class FakeDriver:
    def __init__(self) -> None:
        self.startup: list[Any] = []

    def on_startup(self, func: Any) -> Any:
        self.startup.append(func)
        return func

    def on_shutdown(self, func: Any) -> Any:
        return func


async def test_a_start_up_hook_that_raises_is_one_error_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    driver = FakeDriver()
    ran: list[str] = []

    with guarded_hooks(driver, "nonebot_plugin_broken"):

        @driver.on_startup
        async def broken() -> None:
            raise RuntimeError("no database")

        @driver.on_startup
        def fine() -> None:
            ran.append("sync hook ran")

    with caplog.at_level(logging.ERROR, logger="pallas.plugins"):
        for hook in driver.startup:
            await hook()  # neither raises
    assert ran == ["sync hook ran"]
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1 and "nonebot_plugin_broken" in errors[0].getMessage()
    assert "RuntimeError: no database" in errors[0].getMessage()
    assert driver.on_startup.__func__ is FakeDriver.on_startup  # type: ignore[attr-defined]


def test_slash_pallas_is_parsed_whatever_command_start_says() -> None:
    from pallas.core.admin_commands import slash_command_words

    assert slash_command_words("/pallas why 3") == ["why", "3"]
    assert slash_command_words("  /pallas") == []
    assert slash_command_words("/pallasx status") is None
    assert slash_command_words("pallas status") is None
    assert slash_command_words("") is None
