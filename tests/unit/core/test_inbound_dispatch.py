"""The one entry's dispatch order (pallas/onebot/edge.py): what NoneBot priorities did.

Handlers of one order all run (as matchers of one NoneBot priority did); a handler returning
True stops the message after its order (the old block / stop_propagation); a failing handler is
logged and the next one still runs.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from pallas.onebot.counters import InboundCounters
from pallas.onebot.edge import dispatch
from pallas.onebot.plugin_parts import InboundHandler, PallasPlugin, PluginParts, declared_parts

Plan = list[tuple[str, int, str]]  # (name, order, what it does: "pass" | "stop" | "fail")


def _chain(plan: Plan, ran: list[str]) -> list[InboundHandler]:
    def make(name: str, action: str) -> Any:
        async def handle(arrival: Any) -> bool:
            ran.append(name)
            if action == "fail":
                raise RuntimeError("handler failed")
            return action == "stop"

        return handle

    return sorted(
        (InboundHandler(name, order, make(name, action)) for name, order, action in plan),
        key=lambda h: h.order,
    )


PALLAS = [("stickers", 2), ("admin", 5), ("feedback", 8), ("memory", 8), ("chat", 10)]


def _plan(**actions: str) -> Plan:
    return [(name, order, actions.get(name, "pass")) for name, order in PALLAS]


ALL = ["stickers", "admin", "feedback", "memory", "chat"]
CASES = [
    ("chatter reaches the chat", _plan(), ALL, None),
    ("an admin command blocks", _plan(admin="stop"), ["stickers", "admin"], "admin"),
    ("feedback stops the chat", _plan(feedback="stop"),
     ["stickers", "admin", "feedback", "memory"], "feedback"),
    ("a memory command stops the chat", _plan(memory="stop"),
     ["stickers", "admin", "feedback", "memory"], "memory"),
    ("a failing sticker handler", _plan(stickers="fail"), ALL, None),
    ("a failing feedback handler", _plan(feedback="fail"), ALL, None),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "plan", "expected", "stopped_by"), CASES, ids=[c[0] for c in CASES]
)
async def test_dispatch_order_and_stops(
    name: str, plan: Plan, expected: list[str], stopped_by: str | None
) -> None:
    ran: list[str] = []
    arrival = SimpleNamespace(event=SimpleNamespace(group_id=1, message_id=2))
    counters = InboundCounters()
    assert await dispatch(_chain(plan, ran), arrival, counters) == stopped_by  # type: ignore[arg-type]
    assert ran == expected
    assert counters.stopped == ({stopped_by: 1} if stopped_by else {})


def test_the_plugins_parts_are_gathered_from_their_metadata_in_order() -> None:
    """Each plugin declares its parts in `PluginMetadata.extra["pallas"]`; the edge sorts the
    handlers by order (plugins of one order keep their name order) and keeps every hook."""

    async def handle(arrival: object) -> bool:
        return False

    async def hook(app: object) -> None:
        return None

    def plugin(name: str, parts: object) -> SimpleNamespace:
        return SimpleNamespace(name=name, metadata=SimpleNamespace(extra={"pallas": parts}))

    loaded = [
        plugin("llm_chat", PallasPlugin(inbound=InboundHandler("llm_chat", 10, handle))),
        plugin("memory_commands", PallasPlugin(inbound=InboundHandler("memory", 8, handle))),
        plugin("feedback", PallasPlugin(inbound=InboundHandler("feedback", 8, handle))),
        plugin("stickers", PallasPlugin(InboundHandler("stickers", 2, handle), (hook,), (hook,))),
        plugin("web_console", PallasPlugin(on_ready=(hook,))),
        SimpleNamespace(name="apscheduler", metadata=None),  # a third-party plugin
        plugin("odd", "not parts"),  # ignored, never fatal
    ]
    parts = PluginParts.gather(declared_parts(loaded))
    assert [(h.name, h.order) for h in parts.handlers] == [
        ("stickers", 2),
        ("feedback", 8),
        ("memory", 8),
        ("llm_chat", 10),
    ]
    assert parts.on_ready == (hook, hook) and parts.on_shutdown == (hook,)
