"""Pallas's lifespan inside NoneBot's: start-up, ready, shut-down — installed once by `bot.py`.

`install(driver)` registers one start-up and one shut-down hook with the NoneBot driver and the
one NoneBot entry for group and private messages (`on_message`, priority 1, `block=False`, so
an operator's third-party plugins still see every message). Nothing else registers anything:
the plugins declare their parts in their metadata (`pallas.onebot.plugin_parts`), collected
here when the edge is built.

    startup    the runtime and the app (`pallas.app.start_app`, the composition root), the
               edge over them (`Edge.build`: lanes, lane choice, inbound handlers, start-up
               loads), handed to the adapter (`GuardedAdapter.attach`)
    ready      the start-up loads and the counters start, the plugins' `on_ready` hooks run
               (the web console, scheduled jobs), "Pallas is up", and once the loads are done
               the start-up heap is frozen (`gc_tuning.settle`)
    shutdown   the plugins' `on_shutdown` hooks, the edge, then the app (after-turn work is
               finished, the writer and the database closed)

The running app is kept by the installed `Lifespan` (the process's one); a plugin reaches it
with `app_or_none()` — a plain call, not a NoneBot `Depends`, which would run a sync dependency
in a worker thread per event.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import Any

import nonebot
from nonebot import get_plugin_config, on_message
from nonebot.adapters import Bot as BaseBot
from nonebot.adapters import Event
from nonebot.adapters.onebot.v11 import Bot, GroupMessageEvent, PrivateMessageEvent
from nonebot.adapters.onebot.v11.config import Config as OneBotConfig
from nonebot.matcher import Matcher
from nonebot.message import event_postprocessor, run_postprocessor
from nonebot.typing import T_State

from pallas.app import PallasApp, start_app
from pallas.core import gc_tuning
from pallas.core.settings import PallasSettings
from pallas.core.tokens import get_encoding
from pallas.onebot.adapter import GuardedAdapter
from pallas.onebot.counters import CounterSettings
from pallas.onebot.edge import Edge
from pallas.onebot.lanes import Lanes
from pallas.onebot.neighbours import Neighbours, NeighbourSettings, answering_plugins
from pallas.onebot.plugin_parts import PluginParts, declared_parts
from pallas.onebot.quoted import fetch_quoted_segments
from pallas.onebot.startup_loads import Loader
from pallas.providers.client import load_sdk
from pallas.providers.image_fetch import default_ssl_context
from pallas.providers.sdk_warmup import warm_request_path
from pallas.ranking import warm_up as load_jieba
from pallas.ranking import warm_up_word_tags as load_word_tags

log = logging.getLogger("pallas")


def _as_ids(values: object) -> frozenset[int]:
    ids = set()
    for value in values or ():  # type: ignore[attr-defined]
        try:
            ids.add(int(value))
        except (TypeError, ValueError):
            log.warning("ignoring non-numeric SUPERUSERS entry %r", value)
    return frozenset(ids)


def reverse_ws_url(host: str, port: int) -> str:
    shown = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    return f"ws://{shown}:{port}/onebot/v11/ws"


def startup_loaders(app: PallasApp) -> tuple[Loader, ...]:
    """What the first reply would otherwise load on the event loop, in the order it is needed:
    the `openai` SDK import (~0.6-1 s), the LLM client's SSL context and httpx pool (~50 ms),
    the SDK's first request path (~20 ms, offline), the BPE ranks (~0.25 s), the CA bundle for
    image downloads (~45 ms), jieba's dictionary (~1 s) and its word tags (~1 s)."""
    return (
        load_sdk,
        app.runtime.llm.warm_client,
        warm_request_path,
        get_encoding,
        default_ssl_context,
        load_jieba,
        load_word_tags,
    )


class Lifespan:
    """The process's one Pallas app and edge, started and stopped with the NoneBot driver."""

    def __init__(self, driver: Any) -> None:
        self._driver = driver
        self.app: PallasApp | None = None
        self.edge: Edge | None = None
        self._settling: set[asyncio.Task[None]] = set()
        self.neighbours = Neighbours()  # fed by NoneBot's processors and API hooks (install)

    async def startup(self) -> None:
        settings = get_plugin_config(PallasSettings)
        config = self._driver.config
        lanes = Lanes()
        others = answering_plugins(nonebot.get_loaded_plugins())
        wait_s = get_plugin_config(NeighbourSettings).pallas_plugin_wait_s
        self.neighbours.wait_s = wait_s if others else 0.0  # nobody else answers: no wait
        if others:  # NoneBot's processors cost a task group per event: only when needed
            _watch_neighbours(self.neighbours)
        log.info(
            "other NoneBot plugins that may answer: %s%s",
            ", ".join(others) or "none",
            f" (an addressed line waits up to {wait_s:g} s for them)" if others else "",
        )
        app = await start_app(
            settings,
            nicknames=tuple(sorted(config.nickname)),
            superusers=_as_ids(config.superusers),
            fetch_quoted=fetch_quoted_segments,  # quoted images via get_msg
            preload_yield=lanes.after_holds,  # a group preload waits while an @ prepares
        )
        parts = PluginParts.gather(declared_parts(nonebot.get_loaded_plugins()))
        edge = Edge.build(
            app,
            lanes,
            parts,
            reads_at_parse=_reads_at_parse(nonebot.get_adapters().values()),
            neighbours=self.neighbours,
            loaders=startup_loaders(app),
            counter_interval_s=get_plugin_config(CounterSettings).pallas_counters_interval_s,
        )
        self.app, self.edge = app, edge
        self._attach(edge)
        log.info(
            "inbound handlers: %s",
            ", ".join(f"{h.name} ({h.order})" for h in parts.handlers) or "none",
        )
        await self.ready(edge, str(config.host), int(config.port))

    async def ready(self, edge: Edge, host: str, port: int) -> None:
        await edge.start()
        token = "set" if get_plugin_config(OneBotConfig).onebot_access_token else "NOT set"
        log.info(
            "Pallas is up. Give NapCat (or Lagrange / LLOneBot) this reverse WebSocket URL: "
            "%s (access token %s)",
            reverse_ws_url(host, port),
            token,
        )
        task = asyncio.create_task(self._settle_heap(edge))
        self._settling.add(task)
        task.add_done_callback(self._settling.discard)

    async def shutdown(self) -> None:
        app, edge = self.app, self.edge
        self.app, self.edge = None, None
        if edge is not None:
            await edge.stop()
        self._attach(None)
        if app is not None:
            await app.stop()

    async def handle_group_message(
        self, bot: Bot, event: GroupMessageEvent | PrivateMessageEvent, state: T_State
    ) -> None:
        """The one NoneBot entry's handler, for group and private messages (no `Depends`:
        nothing here runs in a worker thread)."""
        edge = self.edge
        if edge is not None:
            await edge.handle(bot, event, state)

    def _attach(self, edge: Edge | None) -> None:
        for adapter in nonebot.get_adapters().values():
            if isinstance(adapter, GuardedAdapter):
                adapter.attach(edge)

    @staticmethod
    async def _settle_heap(edge: Edge) -> None:
        """Once the app is up and the start-up loads are done: freeze the start-up heap."""
        await edge.loads.ready()
        gc_tuning.settle()


def _reads_at_parse(adapters: Iterable[object]) -> bool:
    """Whether the edge reads each message as its frame is parsed: a `GuardedAdapter` is
    registered (`bot.py`); else the stock adapter mode (`pallas.onebot.edge`)."""
    return any(isinstance(adapter, GuardedAdapter) for adapter in adapters)


_installed: Lifespan | None = None


def install(driver: Any) -> Lifespan:
    """Register Pallas's lifespan and its one message entry with `driver` (once per process;
    `bot.py` calls it before loading the plugins)."""
    global _installed
    if _installed is not None:
        return _installed
    lifespan = Lifespan(driver)
    driver.on_startup(lifespan.startup)
    driver.on_shutdown(lifespan.shutdown)
    entry = on_message(priority=1, block=False)
    entry.append_handler(lifespan.handle_group_message)
    _installed = lifespan
    return lifespan


_watching: set[int] = set()  # the Neighbours objects NoneBot already reports to


def _watch_neighbours(neighbours: Neighbours) -> None:
    """NoneBot tells `neighbours` which other plugin took or answered a line
    (`pallas.onebot.neighbours`): after each matcher that ran, on each API call, and once the
    dispatch of an event is over. Registered at start-up, once, and only when another plugin
    may answer: NoneBot runs each processor in a task group of its own per event, which cost
    Pallas alone about a quarter of its ingest rate (`benchmarks.ingest`)."""
    if id(neighbours) in _watching:
        return
    _watching.add(id(neighbours))

    async def matcher_ran(matcher: Matcher, event: Event) -> None:
        neighbours.matcher_ran(matcher, event)

    async def dispatched(event: Event) -> None:
        neighbours.dispatched(event)

    async def api_calling(bot: BaseBot, api: str, data: dict[str, Any]) -> None:
        neighbours.api_calling(api)

    run_postprocessor(matcher_ran)
    event_postprocessor(dispatched)
    BaseBot.on_calling_api(api_calling)


def app_or_none() -> PallasApp | None:
    """The running app (None before start-up, after shut-down, or when not installed)."""
    return _installed.app if _installed is not None else None


def edge_or_none() -> Edge | None:
    """The running edge (its counters: the console's status page), or None."""
    return _installed.edge if _installed is not None else None


def get_app() -> PallasApp:
    app = app_or_none()
    if app is None:
        raise RuntimeError("Pallas is not started (the driver's start-up has not run yet)")
    return app


__all__ = [
    "Lifespan",
    "app_or_none",
    "edge_or_none",
    "get_app",
    "install",
    "reverse_ws_url",
    "startup_loaders",
]
