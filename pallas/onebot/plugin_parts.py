"""What a Pallas plugin contributes to the edge, declared in its NoneBot metadata.

A plugin under `packages/` does not register anything with Pallas when it is imported. It
declares its parts as data in `__plugin_meta__.extra["pallas"]` (NoneBot's place for a plugin's
own metadata):

    __plugin_meta__ = PluginMetadata(
        name="llm_chat", ...,
        extra={PALLAS: PallasPlugin(inbound=InboundHandler("llm_chat", 10, handle_group_message))},
    )

and the edge collects them from NoneBot's loaded plugins when it is built at start-up
(`pallas.onebot.edge.build_edge`): the inbound handlers in `order`, the hooks run once the app
is up (`on_ready`) and at shut-down (`on_shutdown`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from pallas.app_model import PallasApp
from pallas.onebot.arrival import Arrival

PALLAS = "pallas"  # the key of a plugin's parts in `PluginMetadata.extra`

Handler = Callable[[Arrival], Awaitable[bool]]
AppHook = Callable[[PallasApp], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class InboundHandler:
    """One step of the inbound dispatch: `handle(arrival)` returns True to stop the message."""

    name: str
    order: int
    handle: Handler


@dataclass(frozen=True, slots=True)
class PallasPlugin:
    """A plugin's parts: an inbound handler, and hooks run with the app once it is up and
    before it stops."""

    inbound: InboundHandler | None = None
    on_ready: tuple[AppHook, ...] = ()
    on_shutdown: tuple[AppHook, ...] = ()


@dataclass(frozen=True, slots=True)
class PluginParts:
    """Every loaded plugin's parts, gathered: handlers sorted by `order` (stable)."""

    handlers: tuple[InboundHandler, ...] = ()
    on_ready: tuple[AppHook, ...] = ()
    on_shutdown: tuple[AppHook, ...] = ()

    @classmethod
    def gather(cls, declared: Iterable[PallasPlugin]) -> PluginParts:
        plugins = list(declared)
        handlers = [p.inbound for p in plugins if p.inbound is not None]
        return cls(
            handlers=tuple(sorted(handlers, key=lambda h: h.order)),
            on_ready=tuple(hook for p in plugins for hook in p.on_ready),
            on_shutdown=tuple(hook for p in plugins for hook in p.on_shutdown),
        )


def declared_parts(plugins: Iterable[Any]) -> list[PallasPlugin]:
    """The `PallasPlugin` each NoneBot plugin declares in its metadata, in plugin-name order."""
    found: list[tuple[str, PallasPlugin]] = []
    for plugin in plugins:
        metadata = getattr(plugin, "metadata", None)
        extra = getattr(metadata, "extra", None) or {}
        parts = extra.get(PALLAS)
        if isinstance(parts, PallasPlugin):
            found.append((str(getattr(plugin, "name", "")), parts))
    return [parts for _, parts in sorted(found, key=lambda item: item[0])]


__all__ = ["PALLAS", "AppHook", "Handler", "InboundHandler", "PallasPlugin", "PluginParts"]
