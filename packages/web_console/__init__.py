"""The operators' web console at http://HOST:PORT/console/ (code in `pallas.web`).

Mounts the console on NoneBot's FastAPI app and arms it once the runtime is up.
"""

from __future__ import annotations

import logging

import nonebot
from nonebot.plugin import PluginMetadata

from pallas.core.settings import PallasSettings
from pallas.onebot.group_names import GroupNames
from pallas.onebot.lifecycle import app_or_none, on_runtime_start, register_lifecycle
from pallas.runtime import PallasRuntime
from pallas.web import mount_console, start_console

__plugin_meta__ = PluginMetadata(
    name="console",
    description="Web console for operators (groups, pipeline, context, routing, memory, cost)",
    usage="open the URL printed at start-up and log in with the console token",
)

log = logging.getLogger("pallas.cli")
register_lifecycle()

if nonebot.get_plugin_config(PallasSettings).pallas_console_enabled:
    _group_names = GroupNames()
    _console = mount_console(
        nonebot.get_app(),
        lambda: app.console_backend(_group_names) if (app := app_or_none()) else None,
    )

    async def _arm(runtime: PallasRuntime, host: str, port: int) -> None:
        try:
            start_console(_console, runtime.settings, runtime.state, runtime.clock, host, port)
        except Exception:  # e.g. data/ not writable: the bot runs on, the console answers 503
            log.exception("web console not started")

    on_runtime_start(_arm)
