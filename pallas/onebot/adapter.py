"""The OneBot v11 adapter with a guarded edge: one bad frame never ends the connection.

`GuardedAdapter` is the stock adapter (registered by `bot.py` in its place) with two changes:

- every frame received on a reverse WebSocket goes through `frame_guard.check_frame` first;
  a refused frame (too large, malformed, too deep, a huge integer, not an object) is logged and
  skipped instead of ending the receive loop;
- an API response is handed to the waiting call only once: a repeated or unknown echo (the
  same response sent twice, an echo of 5,000 digits) is logged and ignored — the stock store
  raises `InvalidStateError` / `ValueError` there, which also ended the loop.

Anything else `json_to_event` raises is logged and the frame skipped. (Only the reverse
WebSocket — how Pallas is deployed — is guarded; the forward-WebSocket client loop of the stock
adapter is not. Frames over uvicorn's own `ws_max_size`, 16 MiB, are still closed by uvicorn
before any of this runs.)

Events are admitted (`pallas.onebot.lanes`) to NoneBot's handlers at most `ADMISSION_SLOTS`
at a time (a slot is held until the handling finishes or for `ADMISSION_HOLD_S`, whichever comes
first): under a burst the event loop then runs a bounded set of handler steps per iteration
instead of thousands, so the receive loop keeps reading frames (and recording them, below) while
handling catches up.
Messages addressed to the bot (`GuardedAdapter.lane_of`, set by `pallas.onebot.inbound` to
`pallas.onebot.lane_choice.EdgeLanes`) take the priority lane: their own `PRIORITY_SLOTS`, so an @
is handled at once instead of waiting behind the burst. From the reading of its frame until its
model request goes out an @ (or an alias address) holds the loop (`Lanes.hold`, at most
`PRIORITY_HOLD_MAX_S`): no unaddressed handler starts, and an event frame read meanwhile waits
before it is parsed (`Lanes.pause_reading`: at most 0.25 s per frame and half the time overall,
`pallas.onebot.read_pause`) — except while the @ waits for an API response, which comes over
the same socket. A frame that may address the bot waits only while `PARALLEL_HOLDS` (4)
addressed turns prepare: their database reads overlap. A reply to someone takes the priority
lane but holds only once NoneBot's `get_msg` showed that it quotes the bot
(`PriorityHold.engage`, from `pallas.onebot.inbound`): a peer that never answers `get_msg`
cannot stall reading.

Frames are taken off the socket by a pump task as fast as they come (`pallas.onebot.read_ahead`,
bounded): API responses are resolved at once, never queued behind events; a frame that may
address the bot is parsed first, after the frames its own group sent before it, so an @ deep in
a burst is read (and holds) soon after it was sent. Parsed events waiting for a normal slot stay
under `BACKLOG_MAX`. Nothing is dropped in either lane.

`received_hooks` run synchronously for every event the moment its frame is parsed, before
NoneBot dispatches it to a task: the recorder hands group messages to the (threaded) writer
there, so what the bot received is stored however far behind the busy event loop's handlers are.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable, Iterable
from typing import Any, ClassVar

from nonebot.adapters import Bot as BaseBot
from nonebot.adapters.onebot.v11 import Adapter
from nonebot.adapters.onebot.v11.event import Event
from nonebot.drivers import WebSocket
from typing_extensions import override

from pallas.onebot.event_parse import parse_event
from pallas.onebot.frame_guard import check_frame
from pallas.onebot.lanes import PRIORITY_HOLD, Lanes, admitted, never_priority
from pallas.onebot.read_ahead import FramePump, FrameScan, Scanned, is_response_frame

log = logging.getLogger("pallas.onebot")

MAX_ECHO_DIGITS = 20
RECEIVE_SLICE_S = 0.03
BACKLOG_MAX = 2048  # parsed events waiting for a normal slot before parsing waits
BACKLOG_POLL_S = 0.005


def _is_event_frame(data: str | bytes) -> bool:
    """An event, not the response to an API call: a cheap look, no parsing."""
    return not is_response_frame(data)


class _GuardedSocket:
    """A WebSocket whose `receive` skips (and logs) frames the adapter must not parse, takes
    frames from a read-ahead pump (`pallas.onebot.read_ahead`: an @ and its group's frames
    before it first; API responses never wait), and paces itself for the handlers."""

    def __init__(self, websocket: WebSocket) -> None:
        self._websocket = websocket
        self.refused = 0
        self._yielded_at = time.perf_counter()
        self_id = websocket.request.headers.get("x-self-id") or ""
        scan = FrameScan(self_id, _group_aliases).scan if self_id else _no_scan
        self.pump = FramePump(websocket.receive, scan, GuardedAdapter.deliver_response)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._websocket, name)

    async def receive(self) -> str | bytes:
        while True:
            await self._bounded_backlog()
            data, lead, urgent = await self.pump.next()
            # A buffered burst is received without the loop ever switching task: give the
            # handlers (an @'s among them) a turn every RECEIVE_SLICE_S of receiving — after
            # every frame while an addressed turn prepares its model request.
            lanes = GuardedAdapter.lanes
            if lanes is not None and lanes.holding:
                if lanes.paused_for(urgent) and not lead and _is_event_frame(data):
                    # The @'s local work gets the loop: this event waits (bounded) before it is
                    # parsed — another @ only while PARALLEL_HOLDS @s prepare (their database
                    # reads overlap). API responses are taken by the pump and never wait. The
                    # frames a waiting @'s group sent before it go on, one per loop turn (mostly
                    # while this @ waits for the database), so that @ is ready to be read.
                    await lanes.pause_reading(urgent)
                else:
                    await asyncio.sleep(0)  # the @'s next step after every frame
                self._yielded_at = time.perf_counter()
            elif time.perf_counter() - self._yielded_at >= RECEIVE_SLICE_S:
                await asyncio.sleep(0)
                self._yielded_at = time.perf_counter()
            verdict = check_frame(data)
            if verdict.ok:
                return data
            self.refused += 1
            log.warning(
                "refused a OneBot frame (%s, %d bytes, starts %r); the connection stays",
                verdict.reason,
                verdict.size,
                data[:60],
            )

    async def _bounded_backlog(self) -> None:
        """Parsed events waiting for a handler slot stay under `BACKLOG_MAX` (then frames wait
        in the read-ahead, then in the socket) — except a frame that may address the bot."""
        while self._backlogged():  # noqa: ASYNC110 - two conditions, changed elsewhere
            await asyncio.sleep(BACKLOG_POLL_S)

    def _backlogged(self) -> bool:
        lanes = GuardedAdapter.lanes
        return (
            lanes is not None
            and lanes.waiting["normal"] >= BACKLOG_MAX
            and not self.pump.urgent_waiting()
        )

    def stop(self) -> None:
        self.pump.stop()


def _no_scan(data: str | bytes) -> Scanned:
    return Scanned(data, None, False)


def _group_aliases(group_id: int) -> Iterable[str]:
    aliases_for = getattr(GuardedAdapter.lane_of, "aliases_for", None)
    return aliases_for(group_id) if aliases_for is not None else ()


def deliver_result(store: Any, result: dict[str, Any]) -> bool:
    """Resolve the API call waiting for `result`'s echo; False (logged) if none is waiting."""
    echo = result.get("echo")
    futures = getattr(store, "_futures", {})
    if not (isinstance(echo, str) and echo.isdecimal() and len(echo) <= MAX_ECHO_DIGITS):
        log.warning("ignored an API response with an unusable echo %r", str(echo)[:40])
        return False
    future = futures.get(int(echo))
    if future is None or future.done():
        log.warning("ignored an API response for echo %s: nothing waits for it (repeat?)", echo)
        return False
    future.set_result(result)
    return True


class GuardedAdapter(Adapter):
    received_hooks: ClassVar[list[Callable[[Event], None]]] = []
    lane_of: ClassVar[Callable[[Event], Any]] = staticmethod(never_priority)
    lanes: ClassVar[Lanes | None] = None

    @override
    def bot_connect(self, bot: BaseBot) -> None:
        if GuardedAdapter.lanes is None:
            GuardedAdapter.lanes = Lanes()
        bot.handle_event = admitted(  # type: ignore[method-assign]
            bot.handle_event, GuardedAdapter.lanes, lambda event: GuardedAdapter.lane_of(event)
        )
        super().bot_connect(bot)

    @override
    async def _call_api(self, bot: BaseBot, api: str, **data: Any) -> Any:
        hold = PRIORITY_HOLD.get()
        if hold is None or not hold.pausing:
            return await super()._call_api(bot, api, **data)  # type: ignore[arg-type]
        with hold.api_call():  # e.g. NoneBot's get_msg for a reply: its response must be read
            return await super()._call_api(bot, api, **data)  # type: ignore[arg-type]

    @override
    async def _handle_ws(self, websocket: WebSocket) -> None:
        guarded = _GuardedSocket(websocket)
        try:
            await super()._handle_ws(guarded)  # type: ignore[arg-type]
        finally:
            guarded.stop()

    @classmethod
    def deliver_response(cls, data: str | bytes) -> bool:
        """An API response taken off the socket by the read-ahead pump, resolved at once;
        False (the frame then queues like any other) when it is not one after all."""
        if not check_frame(data).ok:
            return False  # the receive loop refuses and logs it
        try:
            json_data = json.loads(data)
        except ValueError:
            return False
        if not isinstance(json_data, dict) or "post_type" in json_data:
            return False
        deliver_result(cls._result_store, json_data)
        return True

    @classmethod
    @override
    def json_to_event(cls, json_data: Any) -> Event | None:
        if isinstance(json_data, dict) and "post_type" not in json_data:
            deliver_result(cls._result_store, json_data)
            return None
        try:  # the stock parse's events, without a pydantic TypeAdapter per segment
            event = (
                parse_event(cls, json_data, super().json_to_event)
                if isinstance(json_data, dict)
                else None
            )
        except Exception:
            log.exception("skipped a OneBot frame the adapter could not turn into an event")
            return None
        for hook in cls.received_hooks if event is not None else ():
            try:
                hook(event)
            except Exception:
                log.exception("a received-event hook failed")
        if event is not None and cls.lanes is not None:
            try:
                cls.lanes.classify_at_read(event, cls.lane_of)
            except Exception:
                log.exception("lane classification at read failed")
        return event
