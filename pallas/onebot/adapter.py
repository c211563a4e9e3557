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
Messages addressed to the bot (the edge's lane choice, `pallas.onebot.lane_choice`) take the
priority lane: their own `PRIORITY_SLOTS`, so an @
is handled at once instead of waiting behind the burst. From the reading of its frame until its
model request goes out an @ (or an alias address) holds the loop (`Lanes.hold`, at most
`PRIORITY_HOLD_MAX_S`): no unaddressed handler starts, and an event frame read meanwhile waits
before it is parsed (`Lanes.pause_reading`: at most 0.25 s per frame and half the time overall,
`pallas.onebot.read_pause`) — except while the @ waits for an API response, which comes over
the same socket. A frame that may address the bot waits only while `PARALLEL_HOLDS` (4)
addressed turns prepare: their database reads overlap. A reply to someone takes the priority
lane but holds only once NoneBot's `get_msg` showed that it quotes the bot
(`PriorityHold.engage`, from `pallas.onebot.edge`): a peer that never answers `get_msg`
cannot stall reading.

Frames are taken off the socket by a pump task as fast as they come (`pallas.onebot.read_ahead`,
bounded): API responses are resolved at once, never queued behind events; a frame that may
address the bot is parsed first, after the frames its own group sent before it, so an @ deep in
a burst is read (and holds) soon after it was sent. Parsed events waiting for a normal slot stay
under `BACKLOG_MAX`. Nothing is dropped in either lane.

The edge (`pallas.onebot.edge.Edge`, built at start-up and handed over with `attach`) sees
every event the moment its frame is parsed (`Edge.on_read`), before it is dispatched to a task:
it converts a group message once, records it (the threaded writer stores it however far behind
the busy event loop's handlers are), chooses its lane and claims the loop for an @. The
adapter runs the reverse WebSocket itself (the stock loop's handshake — X-Self-ID, access
token — then frames through the guard and the read-ahead) so that each connection's bot is a
`GuardedBot`, whose `handle_event` goes through the lanes: nothing is patched onto NoneBot's
objects and no class attribute is set at start-up.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from nonebot.adapters import Bot as BaseBot
from nonebot.adapters.onebot.v11 import Adapter, Bot
from nonebot.adapters.onebot.v11.event import Event
from nonebot.drivers import WebSocket
from nonebot.exception import WebSocketClosed
from typing_extensions import override

from pallas.core.log_limit import LogLimiter, skipped_note
from pallas.core.storable import needs_cleaning, storable_value
from pallas.onebot.edge import Edge
from pallas.onebot.event_parse import EventRefused, parse_event
from pallas.onebot.frame_guard import check_frame
from pallas.onebot.identify import identify
from pallas.onebot.lanes import PRIORITY_HOLD, Lanes
from pallas.onebot.read_ahead import FramePump, FrameScan, Scanned, is_response_frame
from pallas.onebot.refused import RefusedFrames

log = logging.getLogger("pallas.onebot")
# refused frames and events: a few lines per kind a minute, then a count (pallas.core.log_limit)
_REFUSALS = LogLimiter(per_window=5, window_s=60.0)

MAX_ECHO_DIGITS = 20
RECEIVE_SLICE_S = 0.03
BACKLOG_MAX = 2048  # parsed events waiting for a normal slot before parsing waits
BACKLOG_POLL_S = 0.005


def frame_ids(data: str | bytes) -> str:
    """The ids a log line names a frame by, read off its raw text (no parse)."""
    text = data[:4096] if isinstance(data, str) else data[:4096].decode("utf-8", "replace")
    found = [f"{key} {m.group(1)[:24]}" for key in ("message_id", "group_id", "user_id")
             if (m := re.search(rf'"{key}"\s*:\s*"?([-\w]+)', text))]  # fmt: skip
    return ", ".join(found) or f"{len(data)} bytes"


def _is_event_frame(data: str | bytes) -> bool:
    """An event, not the response to an API call: a cheap look, no parsing."""
    return not is_response_frame(data)


class _GuardedSocket:
    """A WebSocket whose `receive` skips (and logs) frames the adapter must not parse, takes
    frames from a read-ahead pump (`pallas.onebot.read_ahead`: an @ and its group's frames
    before it first; API responses never wait), and paces itself for the handlers."""

    def __init__(
        self,
        websocket: WebSocket,
        *,
        lanes: Lanes | None,
        aliases: Callable[[int], Iterable[str]],
        respond: Callable[[str | bytes], bool],
        keep_refused: RefusedFrames | None = None,
    ) -> None:
        self._websocket = websocket
        self._lanes = lanes
        self._keep_refused = keep_refused
        self.refused = 0
        self._yielded_at = time.perf_counter()
        self_id = websocket.request.headers.get("x-self-id") or ""
        scan = FrameScan(self_id, aliases).scan if self_id else _no_scan
        self.pump = FramePump(websocket.receive, scan, respond)

    async def receive(self) -> str | bytes:
        lanes = self._lanes
        while True:
            await self._bounded_backlog()
            data, lead, urgent = await self.pump.next()
            # A buffered burst is received without the loop ever switching task: give the
            # handlers (an @'s among them) a turn every RECEIVE_SLICE_S of receiving — after
            # every frame while an addressed turn prepares its model request.
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
            if self._keep_refused is not None:
                self._keep_refused.keep(f"frame:{verdict.reason}", verdict.reason, data)
            logged, skipped = _REFUSALS.allow(f"frame:{verdict.reason}")
            if logged:
                log.warning(
                    "refused a OneBot frame (%s, %d bytes, starts %r); the connection stays%s",
                    verdict.reason,
                    verdict.size,
                    data[:60],
                    skipped_note(skipped),
                )

    async def _bounded_backlog(self) -> None:
        """Parsed events waiting for a handler slot stay under `BACKLOG_MAX` (then frames wait
        in the read-ahead, then in the socket) — except a frame that may address the bot."""
        while self._backlogged():  # noqa: ASYNC110 - two conditions, changed elsewhere
            await asyncio.sleep(BACKLOG_POLL_S)

    def _backlogged(self) -> bool:
        lanes = self._lanes
        return (
            lanes is not None
            and lanes.waiting["normal"] >= BACKLOG_MAX
            and not self.pump.urgent_waiting()
        )

    async def close(self, code: int = 1000, reason: str = "") -> None:
        await self._websocket.close(code, reason)

    def stop(self) -> None:
        self.pump.stop()


def _no_scan(data: str | bytes) -> Scanned:
    return Scanned(data, None, False)


def _no_aliases(group_id: int) -> Iterable[str]:
    return ()


def deliver_result(store: Any, result: dict[str, Any]) -> bool:
    """Resolve the API call waiting for `result`'s echo; False (logged) if none is waiting."""
    echo = result.get("echo")
    futures = getattr(store, "_futures", {})
    if not (isinstance(echo, str) and echo.isdecimal() and len(echo) <= MAX_ECHO_DIGITS):
        logged, skipped = _REFUSALS.allow("echo")
        if logged:
            log.warning("ignored an API response with an unusable echo %r%s", str(echo)[:40],
                        skipped_note(skipped))  # fmt: skip
        return False
    future = futures.get(int(echo))
    if future is None or future.done():
        log.warning("ignored an API response for echo %s: nothing waits for it (repeat?)", echo)
        return False
    future.set_result(result)
    return True


def _log_refused(refused: EventRefused) -> None:
    logged, skipped = _REFUSALS.allow(refused.kind)
    if logged:
        log.warning("refused a OneBot %s%s", refused, skipped_note(skipped))


class GuardedBot(Bot):
    """A connection's bot: its events are handled through the edge's lanes (`admitted`)."""

    def __init__(self, adapter: GuardedAdapter, self_id: str, edge: Edge | None) -> None:
        super().__init__(adapter, self_id)
        self._run: Callable[[Event], Awaitable[None]] | None = (
            edge.admitted(super().handle_event) if edge is not None else None
        )

    @override
    async def handle_event(self, event: Event) -> None:
        if self._run is None:
            await super().handle_event(event)
        else:
            await self._run(event)


class GuardedAdapter(Adapter):
    _edge: Edge | None = None  # set on the instance by `attach`

    def attach(self, edge: Edge | None) -> None:
        """Hand the adapter the edge built at start-up (None at shut-down)."""
        self._edge = edge

    @property
    def edge(self) -> Edge | None:
        return self._edge

    @override
    async def _call_api(self, bot: BaseBot, api: str, **data: Any) -> Any:
        hold = PRIORITY_HOLD.get()
        if hold is None or not hold.pausing:
            return await super()._call_api(bot, api, **data)  # type: ignore[arg-type]
        with hold.api_call():  # e.g. NoneBot's get_msg for a reply: its response must be read
            return await super()._call_api(bot, api, **data)  # type: ignore[arg-type]

    @override
    async def _handle_ws(self, websocket: WebSocket) -> None:
        """The reverse WebSocket of one OneBot implementation: the stock handshake, then every
        frame through the guard and the read-ahead, parsed, seen by the edge, dispatched."""
        self_id = websocket.request.headers.get("x-self-id")
        if not self_id:
            log.warning("refused a OneBot connection: no X-Self-ID header")
            await websocket.close(1008, "Missing X-Self-ID Header")
            return
        if self_id in self.bots:
            log.warning("refused a second OneBot connection for bot %s", self_id)
            await websocket.close(1008, "Duplicate X-Self-ID")
            return
        refused = self._check_access_token(websocket.request)
        if refused is not None:
            log.warning("refused a OneBot connection for bot %s: bad access token", self_id)
            await websocket.close(1008, str(refused.content))
            return
        await websocket.accept()
        edge = self._edge
        bot = GuardedBot(self, self_id, edge)
        self.bot_connect(bot)
        self.connections[self_id] = websocket
        log.info("OneBot bot %s connected", self_id)
        identifying = self._identify(bot, edge)
        guarded = _GuardedSocket(
            websocket,
            lanes=edge.lanes if edge is not None else None,
            aliases=edge.lane_choice.aliases_for if edge is not None else _no_aliases,
            respond=self.deliver_response,
            keep_refused=edge.refused if edge is not None else None,
        )
        try:
            await self._receive_events(guarded, bot, edge)
        except WebSocketClosed:
            log.warning("OneBot connection of bot %s closed by the peer", self_id)
        except Exception:
            log.exception("OneBot connection of bot %s failed", self_id)
        finally:
            guarded.stop()
            if identifying is not None:
                identifying.cancel()
            with contextlib.suppress(Exception):
                await websocket.close()
            self.connections.pop(self_id, None)
            self.bot_disconnect(bot)
            if edge is not None and self_id.isdecimal():
                edge.app.runtime.accounts.disconnected(int(self_id))

    def _identify(self, bot: GuardedBot, edge: Edge | None) -> asyncio.Task[None] | None:
        """Note the account as connected and ask who it is, beside the receive loop."""
        if edge is None or not bot.self_id.isdecimal():
            return None
        accounts = edge.app.runtime.accounts
        accounts.connected(int(bot.self_id))
        return asyncio.create_task(identify(bot, accounts), name=f"identify:{bot.self_id}")

    async def _receive_events(
        self, socket: _GuardedSocket, bot: GuardedBot, edge: Edge | None
    ) -> None:
        """Read frames until the peer closes or the socket fails (both raised by `receive`);
        whatever one frame's event raises on its way in is that frame's alone."""
        while True:
            data = await socket.receive()
            try:
                self._take_frame(data, bot, edge)
            except Exception as exc:  # one event's fault: logged, the connection stays
                logged, skipped = _REFUSALS.allow(f"event:{type(exc).__name__}")
                if logged:
                    log.warning(
                        "skipped a OneBot event (%s) that failed on its way in: %s: %s; "
                        "the connection stays%s",
                        frame_ids(data),
                        type(exc).__name__,
                        str(exc)[:200],
                        skipped_note(skipped),
                    )
                log.debug("the failed event's traceback", exc_info=True)

    def _take_frame(self, data: str | bytes, bot: GuardedBot, edge: Edge | None) -> None:
        """One frame: parsed (its text made storable), seen by the edge, dispatched."""
        try:
            json_data = json.loads(data)
        except ValueError:  # check_frame parsed it; a second failure is not expected
            log.warning("skipped a OneBot frame that is not JSON (%d bytes)", len(data))
            return
        if needs_cleaning(data):
            json_data = storable_value(json_data)
        event = self._event(json_data, edge)
        if event is None:
            return
        if edge is not None:
            try:
                edge.on_read(event)
            except Exception:  # the edge's own bug: the event is still handled, unrecorded
                log.exception("the edge failed reading event %s", frame_ids(data))
        task = asyncio.create_task(bot.handle_event(event))
        task.add_done_callback(self.tasks.discard)
        self.tasks.add(task)

    def _event(self, json_data: Any, edge: Edge | None) -> Event | None:
        """`json_to_event`, keeping a refused event's frame (`pallas.onebot.refused`)."""
        if not isinstance(json_data, dict) or "post_type" not in json_data:
            return self.json_to_event(json_data)
        try:
            return parse_event(type(self), json_data)
        except EventRefused as refused:
            if edge is not None:
                edge.refused.keep(f"event:{refused.kind}", str(refused), json_data)
            _log_refused(refused)
            return None

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
        if not isinstance(json_data, dict):
            return None
        try:  # the stock parse's events, without a pydantic TypeAdapter per segment
            return parse_event(cls, json_data)
        except EventRefused as refused:  # hostile or broken input: one line, no traceback
            _log_refused(refused)
            return None
        except Exception:  # our own bug: a traceback, and the connection stays
            log.exception("skipped a OneBot frame the adapter could not turn into an event")
            return None
