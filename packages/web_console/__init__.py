"""The operators' web console at http://HOST:PORT/console/ (code in `pallas.web`).

Mounts the console on NoneBot's FastAPI app when the plugin loads (routes must exist before the
server starts) and arms it once the app is up (its `on_ready` hook).
"""

from __future__ import annotations

import logging

import nonebot
from nonebot.adapters.onebot.v11.config import Config as OneBotConfig
from nonebot.plugin import PluginMetadata

from pallas.app_model import PallasApp
from pallas.core.settings import PallasSettings
from pallas.onebot.group_names import GroupNames
from pallas.onebot.lifespan import app_or_none, edge_or_none
from pallas.onebot.plugin_parts import PALLAS, PallasPlugin
from pallas.web import mount_console, start_console

log = logging.getLogger("pallas.console")

parts = PallasPlugin()
if nonebot.get_plugin_config(PallasSettings).pallas_console_enabled:
    _group_names = GroupNames()
    _console = mount_console(
        nonebot.get_app(),
        lambda: app.console_backend(_group_names) if (app := app_or_none()) else None,
    )

    async def arm(app: PallasApp) -> None:
        runtime, config = app.runtime, nonebot.get_driver().config
        try:
            start_console(
                _console,
                runtime.llm.endpoints.current().settings,  # the key in force is masked too
                runtime.state,
                runtime.clock,
                str(config.host),
                int(config.port),
                onebot_token=str(nonebot.get_plugin_config(OneBotConfig).onebot_access_token or ""),
                refused_frames=_refused_frames,
            )
        except Exception:  # e.g. data/ not writable: the bot runs on, the console answers 503
            log.exception("web console not started")

    def _refused_frames() -> dict[str, int]:
        edge = edge_or_none()
        return dict(edge.counters.refused) if edge is not None else {}

    parts = PallasPlugin(on_ready=(arm,))

__plugin_meta__ = PluginMetadata(
    name="console",
    description="Web console for operators (groups, pipeline, context, routing, memory, cost)",
    usage="open the URL printed at start-up and log in with the console token",
    extra={PALLAS: parts},
)
