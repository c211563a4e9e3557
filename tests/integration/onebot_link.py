"""The real OneBot edge in-process, over a scripted WebSocket: for generated-input tests.

`EdgeLink` runs `GuardedAdapter._handle_ws` — the frame guard, the read-ahead, the parse, the
edge's `on_read` (convert, line key, record, lane), the lanes and the inbound handlers with
Pallas's own chat handler (`packages/llm_chat`) — over a `ScriptedSocket` that plays a list of
frames, answers the bot's API calls with a failure (as a peer that knows no such message does),
then closes like a peer. NoneBot's matcher dispatch is replaced by the edge's inbound entry (what
`pallas.onebot.lifespan`'s one `on_message` does in a deployment), so no other test's matchers
run. The app is the composition root's (`tests/integration/chat_app.py`).
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import nonebot
import pytest
from nonebot.adapters.onebot.v11 import Bot, MessageEvent
from nonebot.drivers import Request
from nonebot.exception import WebSocketClosed

from pallas.app import PallasApp
from pallas.onebot.adapter import GuardedAdapter
from pallas.onebot.edge import Edge
from pallas.onebot.lanes import Lanes
from pallas.onebot.neighbours import Neighbours
from pallas.onebot.plugin_parts import InboundHandler, PluginParts

REPO = Path(__file__).resolve().parents[2]


def _llm_chat_handler() -> InboundHandler:
    """Pallas's chat handler, from its plugin file (not loaded as a NoneBot plugin here)."""
    path = REPO / "packages" / "llm_chat" / "__init__.py"
    spec = importlib.util.spec_from_file_location("pallas_test_llm_chat", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return InboundHandler("llm_chat", module.ORDER, module.handle_group_message)


class ScriptedSocket:
    """A reverse WebSocket whose peer sends `frames`, fails every API call, then closes."""

    def __init__(self, self_id: int, frames: Sequence[str | bytes]) -> None:
        self.request = Request("GET", "ws://127.0.0.1/onebot/v11/ws",
                               headers={"x-self-id": str(self_id)})  # fmt: skip
        self._incoming: asyncio.Queue[str | bytes | None] = asyncio.Queue()
        for frame in frames:
            self._incoming.put_nowait(frame)
        self.sent = len(frames)
        self.read = 0
        self.closed_by_peer = False
        self.api_calls: list[str] = []

    @property
    def closed(self) -> bool:
        return self.closed_by_peer

    async def accept(self) -> None:
        return None

    async def close(self, code: int = 1000, reason: str = "") -> None:
        return None

    def hang_up(self) -> None:
        """The peer closes once the frames it sent are read (and API calls answered)."""
        self._incoming.put_nowait(None)

    async def receive(self) -> str | bytes:
        frame = await self._incoming.get()
        if frame is None:
            self.closed_by_peer = True
            raise WebSocketClosed(1000)
        self.read += 1
        return frame

    async def send(self, data: str | bytes) -> None:
        call = json.loads(data)
        self.api_calls.append(str(call.get("action")))
        reply = {"status": "failed", "retcode": 100, "data": None, "echo": call.get("echo")}
        self.sent += 1
        self._incoming.put_nowait(json.dumps(reply))


class EdgeLink:
    """One app's edge behind a `GuardedAdapter`; `play(frames)` runs one connection."""

    def __init__(self, app: PallasApp, edge: Edge, adapter: GuardedAdapter) -> None:
        self.app = app
        self.edge = edge
        self.adapter = adapter

    @classmethod
    async def start(cls, app: PallasApp) -> EdgeLink:
        edge = Edge.build(
            app,
            Lanes(),
            PluginParts.gather([]),
            reads_at_parse=True,
            neighbours=Neighbours(),
            counter_interval_s=3600,
        )
        edge.parts = PluginParts(handlers=(_llm_chat_handler(),))
        await edge.start()
        adapter = GuardedAdapter(nonebot.get_driver())
        adapter.attach(edge)
        return cls(app, edge, adapter)

    async def stop(self) -> None:
        self.adapter.attach(None)
        await self.edge.stop()

    async def play(self, self_id: int, frames: Sequence[str | bytes]) -> ScriptedSocket:
        """One connection that sends `frames` then closes; returns once every event's handling
        (and the writer) has finished."""
        socket = ScriptedSocket(self_id, frames)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr("nonebot.adapters.onebot.v11.bot.handle_event", self._dispatch)
            connection = asyncio.create_task(self.adapter._handle_ws(socket))  # type: ignore[arg-type]
            await self._idle(socket, connection)
            socket.hang_up()
            await asyncio.wait_for(connection, 60)
            await self._settle()
        return socket

    async def _idle(self, socket: ScriptedSocket, connection: asyncio.Task[None]) -> None:
        """Until every frame was read and handled (or the connection ended early)."""
        quiet = 0
        for _ in range(6_000):
            if connection.done():
                return
            busy = socket.read < socket.sent or bool(self.adapter.tasks)
            quiet = 0 if busy else quiet + 1
            if quiet >= 3:
                return
            await self._settle()
            await asyncio.sleep(0.01)
        raise TimeoutError("the edge did not finish the frames it was sent")

    async def _dispatch(self, bot: Bot, event: Any) -> None:
        if isinstance(event, MessageEvent):
            await self.edge.handle(bot, event, {})

    async def _settle(self) -> None:
        while self.adapter.tasks:
            await asyncio.gather(*list(self.adapter.tasks), return_exceptions=True)
        await self.app.runtime.writer.flush()


Settle = Callable[[], Awaitable[None]]

__all__ = ["EdgeLink", "ScriptedSocket"]
