"""Start / stop the Pallas app with the NoneBot driver and hand it to plugins.

The one `PallasApp` (pallas/app.py, the composition root) lives here; plugins take it (or one
of its services) with a plain `app_or_none()` call — not a NoneBot `Depends`: a sync dependency
runs in a worker thread per event. Group messages reach the plugins through the one inbound
entry (`pallas.onebot.inbound`), which hands them the app. No plugin keeps a service cache.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

import nonebot
from nonebot import get_driver, get_plugin_config
from nonebot.adapters.onebot.v11.config import Config as OneBotConfig

from pallas.app import PallasApp, start_app
from pallas.core import gc_tuning
from pallas.core.settings import PallasSettings
from pallas.onebot import startup_loads as warmup
from pallas.onebot.quoted import fetch_quoted_segments
from pallas.runtime import PallasRuntime

log = logging.getLogger("pallas")

_app: PallasApp | None = None
_registered = False
# run right after the runtime starts, before the "Pallas is up" line (e.g. the web console)
_on_runtime_start: list[Callable[[PallasRuntime, str, int], Awaitable[None]]] = []


def on_runtime_start(hook: Callable[[PallasRuntime, str, int], Awaitable[None]]) -> None:
    """Register `hook(runtime, host, port)`; idempotent per hook."""
    if hook not in _on_runtime_start:
        _on_runtime_start.append(hook)


def get_app() -> PallasApp:
    if _app is None:
        raise RuntimeError("Pallas runtime is not started (driver start-up has not run yet)")
    return _app


def app_or_none() -> PallasApp | None:
    """The app (None until start-up has run)."""
    return _app


def get_runtime() -> PallasRuntime:
    return get_app().runtime


def runtime_or_none() -> PallasRuntime | None:
    return _app.runtime if _app is not None else None


def _as_ids(values: object) -> frozenset[int]:
    ids = set()
    for value in values or ():  # type: ignore[union-attr]
        try:
            ids.add(int(value))
        except (TypeError, ValueError):
            log.warning("ignoring non-numeric SUPERUSERS entry %r", value)
    return frozenset(ids)


def reverse_ws_url(host: str, port: int) -> str:
    shown = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    return f"ws://{shown}:{port}/onebot/v11/ws"


_settling: set[asyncio.Task[None]] = set()


async def _settle_heap() -> None:
    """Once the app is up and the warm-ups loaded: freeze the start-up heap (gc_tuning)."""
    for _ in range(50):  # the warm-ups start in a later start-up hook (if a plugin has one)
        if warmup.started():
            break
        await asyncio.sleep(0.1)
    await warmup.ready()
    gc_tuning.settle()


def register_lifecycle() -> None:
    """Idempotent: every Pallas plugin calls this at import time."""
    global _registered
    if _registered:
        return
    _registered = True
    driver = get_driver()

    @driver.on_startup
    async def _start() -> None:
        global _app
        settings = get_plugin_config(PallasSettings)
        config = driver.config
        _app = await start_app(
            settings,
            nicknames=tuple(sorted(config.nickname)),
            superusers=_as_ids(config.superusers),
            fetch_quoted=fetch_quoted_segments,  # quoted images via get_msg
        )
        for hook in _on_runtime_start:
            await hook(_app.runtime, str(config.host), int(config.port))
        token = "set" if get_plugin_config(OneBotConfig).onebot_access_token else "NOT set"
        log.info(
            "Pallas is up. Give NapCat (or Lagrange / LLOneBot) this reverse WebSocket URL: "
            "%s (access token %s)",
            reverse_ws_url(str(config.host), int(config.port)),
            token,
        )
        task = asyncio.create_task(_settle_heap())
        _settling.add(task)
        task.add_done_callback(_settling.discard)

    @driver.on_shutdown
    async def _stop() -> None:
        global _app
        if _app is not None:
            app, _app = _app, None
            await app.stop()


__all__ = [
    "app_or_none",
    "get_app",
    "get_runtime",
    "nonebot",
    "on_runtime_start",
    "register_lifecycle",
    "reverse_ws_url",
    "runtime_or_none",
]
