"""The operators' web console, served by the bot under `/console` (see README "Console").

Plain FastAPI + Jinja2 + vendored htmx / SortableJS; the NoneBot plugin `packages/console` only
mounts it on NoneBot's app and starts it with the runtime.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from fastapi import APIRouter, FastAPI

from pallas.product.llm.memory.service import MemoryService
from pallas.runtime import PallasRuntime
from pallas.web.app import (
    PREFIX,
    Console,
    ConsoleRoute,
    login_routes,
    static_files,
)
from pallas.web.auth import ConsoleAuth, load_or_create_token, startup_lines
from pallas.web.backend import ConsoleBackend, GroupNamesSource
from pallas.web.editing import (
    config_routes,
    memory_routes,
    pipeline_routes,
    pipeline_switch_routes,
)
from pallas.web.pages import group_pages, read_pages

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
    group_pages(router, console)
    pipeline_routes(router, console)
    pipeline_switch_routes(router, console)
    memory_routes(router, console)
    config_routes(router, console)
    return router


def mount_console(
    app: FastAPI,
    runtime: Callable[[], PallasRuntime | None],
    *,
    group_names: GroupNamesSource | None = None,
    memory: Callable[[], MemoryService | None] | None = None,
) -> Console:
    """Add the console's routes, static files and login redirect to `app`."""
    cache: dict[int, ConsoleBackend] = {}

    def backend() -> ConsoleBackend | None:
        rt = runtime()
        if rt is None:
            return None
        if id(rt) not in cache:
            cache.clear()
            shared = memory() if memory is not None else None  # the app's one memory service
            cache[id(rt)] = ConsoleBackend(rt, group_names=group_names, memory=shared)
        return cache[id(rt)]

    console = Console(backend)
    app.include_router(build_router(console))
    app.mount(f"{PREFIX}/static", static_files(), name="console-static")
    return console


def start_console(console: Console, runtime: PallasRuntime, host: str, port: int) -> None:
    """Load (or create) the token, arm the auth, log the URL and any warnings."""
    settings = runtime.settings
    token = load_or_create_token(settings.pallas_console_token, settings.pallas_data_dir)
    console.start(ConsoleAuth(token.value, runtime.state, runtime.clock.now))
    for level, line in startup_lines(token, host, console_url(host, port)):
        getattr(log, level)(line)


__all__ = ["console_url", "mount_console", "start_console"]
