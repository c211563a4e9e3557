"""The operators' web console, served by the bot under `/console` (docs/operations.md).

Plain FastAPI + Jinja2 + vendored htmx / SortableJS; the NoneBot plugin `packages/web_console` only
mounts it on NoneBot's app and starts it once the app is up.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping

from fastapi import APIRouter, FastAPI

from pallas.core.clock import Clock
from pallas.core.log_ring import LOG_RING
from pallas.core.settings import PallasSettings
from pallas.core.state import StateStore
from pallas.web.app import PREFIX, Console, ConsoleRoute, Listening, login_routes, static_files
from pallas.web.auth import ConsoleAuth, load_or_create_token, startup_lines
from pallas.web.backend import ConsoleBackend
from pallas.web.editing import config_routes, memory_routes, pipeline_routes, pipeline_switch_routes
from pallas.web.failures import error_pages
from pallas.web.group_pages import message_routes, overview_routes
from pallas.web.log_pages import log_routes
from pallas.web.model_pages import backup_routes, edge_routes, model_routes
from pallas.web.pages import group_pages, read_pages
from pallas.web.persona_pages import persona_routes
from pallas.web.reminder_pages import reminder_routes
from pallas.web.settings_pages import settings_routes
from pallas.web.status import status_pages
from pallas.web.voice_pages import voice_routes
from pallas.web.worldbook_pages import worldbook_routes

log = logging.getLogger("pallas.console")


def console_url(host: str, port: int) -> str:
    shown = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    if ":" in shown:
        shown = f"[{shown}]"
    return f"http://{shown}:{port}{PREFIX}/"


def build_router(console: Console) -> APIRouter:
    router = APIRouter(prefix=PREFIX, include_in_schema=False, route_class=ConsoleRoute)
    login_routes(router, console)
    read_pages(router, console)
    status_pages(router, console)
    error_pages(router, console)
    group_pages(router, console)
    pipeline_routes(router, console)
    pipeline_switch_routes(router, console)
    memory_routes(router, console)
    reminder_routes(router, console)
    config_routes(router, console)
    overview_routes(router, console)
    message_routes(router, console)
    persona_routes(router, console)
    worldbook_routes(router, console)
    log_routes(router, console)
    settings_routes(router, console)
    model_routes(router, console)
    edge_routes(router, console)
    backup_routes(router, console)
    voice_routes(router, console)
    return router


def mount_console(app: FastAPI, backend: Callable[[], ConsoleBackend | None]) -> Console:
    """Add the console's routes, static files and login redirect to `app`; `backend` gives the
    running bot's adapter (None until start-up has run: the pages answer 503)."""
    console = Console(backend)
    app.include_router(build_router(console))
    app.mount(f"{PREFIX}/static", static_files(), name="console-static")
    return console


def start_console(
    console: Console,
    settings: PallasSettings,
    state: StateStore,
    clock: Clock,
    host: str,
    port: int,
    onebot_token: str = "",
    refused_frames: Callable[[], Mapping[str, int]] | None = None,
) -> None:
    """Load (or create) the token, arm the auth, log the URL and any warnings. `onebot_token`:
    the OneBot access token (the first-run checklist says whether one is set);
    `refused_frames`: the edge's refused-frame counts by kind, for the status page."""
    token = load_or_create_token(settings.pallas_console_token, settings.pallas_data_dir)
    LOG_RING.mask(token.value, settings.openai_api_key)  # never shown by the console's log tail
    console.start(
        ConsoleAuth(token.value, state, clock.now),
        Listening(host, port, onebot_token),
        refused_frames,
    )
    for level, line in startup_lines(token, host, console_url(host, port)):
        getattr(log, level)(line)


__all__ = ["console_url", "mount_console", "start_console"]
