"""The one entry's dispatch order (pallas/onebot/inbound.py): what NoneBot priorities did.

Handlers of one order all run (as matchers of one NoneBot priority did); a handler returning
True stops the message after its order (the old block / stop_propagation); a failing handler is
logged and the next one still runs.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from pallas.onebot.inbound import InboundHandler, dispatch

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
    assert await dispatch(arrival, _chain(plan, ran)) == stopped_by  # type: ignore[arg-type]
    assert ran == expected
