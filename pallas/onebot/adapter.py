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

Events are admitted to NoneBot's handlers at most `ADMISSION_SLOTS` at a time (a slot is held
until the handling finishes or for `ADMISSION_HOLD_S`, whichever comes first): under a burst the
event loop then runs a bounded set of handler steps per iteration instead of thousands, so the
receive loop keeps reading frames (and recording them, below) while handling catches up.
Messages addressed to the bot (`GuardedAdapter.lane_of`, set by `pallas.onebot.inbound` to
`pallas.onebot.lanes.EdgeLanes`) take the priority lane: their own `PRIORITY_SLOTS`, so an @
is handled at once instead of waiting behind the burst. From the reading of its frame until its
model request goes out an @ (or an alias address) holds the loop (`Lanes.hold`, at most
`PRIORITY_HOLD_MAX_S`): no unaddressed handler starts, and an event frame read meanwhile waits
before it is parsed (`Lanes.pause_reading`: at most 0.25 s per frame and half the time overall,
`pallas.onebot.read_pause`) — except while the @ waits for an API response, which comes over
the same socket. A reply to someone takes the priority lane but holds only once NoneBot's
`get_msg` showed that it quotes the bot (`PriorityHold.engage`, from `pallas.onebot.inbound`):
a peer that never answers `get_msg` cannot stall reading.

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
import contextlib
import contextvars
import json
import logging
import sys
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator
from typing import Any, ClassVar

from nonebot.adapters import Bot as BaseBot
from nonebot.adapters.onebot.v11 import Adapter
from nonebot.adapters.onebot.v11.event import Event
from nonebot.drivers import WebSocket
from typing_extensions import override

from pallas.onebot.event_parse import parse_event
from pallas.onebot.frame_guard import check_frame
from pallas.onebot.read_ahead import FramePump, FrameScan, Scanned, is_response_frame
from pallas.onebot.read_pause import PauseBudget

log = logging.getLogger("pallas.onebot")

MAX_ECHO_DIGITS = 20
ADMISSION_SLOTS = 32
PRIORITY_SLOTS = 8
ADMISSION_HOLD_S = 0.2
RECEIVE_SLICE_S = 0.03
BACKLOG_MAX = 2048  # parsed events waiting for a normal slot before parsing waits
BACKLOG_POLL_S = 0.005
PRIORITY_QUIET_S = 1.0
QUIET_TRICKLE_SLOTS = 2
PRIORITY_HOLD_MAX_S = 1.5
# How soon a thread waiting for the GIL gets it from a busy one (Python's default: 5 ms). The
# database round trips of an @'s turn finish on driver threads (aiosqlite) while the event loop
# thread keeps reading frames: each would wait the full interval for the GIL.
GIL_SWITCH_INTERVAL_S = 0.001
_READ_VERDICTS_MAX = 100_000


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
            data, lead = await self.pump.next()
            # A buffered burst is received without the loop ever switching task: give the
            # handlers (an @'s among them) a turn every RECEIVE_SLICE_S of receiving — after
            # every frame while an addressed turn prepares its model request.
            lanes = GuardedAdapter.lanes
            if lanes is not None and lanes.holding:
                if lanes.reading_paused and not lead and _is_event_frame(data):
                    # The @'s local work gets the loop: this event waits (bounded) before it is
                    # parsed (another @ too: @s sharing the loop all finish late). API responses
                    # are taken by the pump and never wait. The frames a waiting @'s group sent
                    # before it go on, one per loop turn (mostly while this @ waits for the
                    # database), so that @ is ready to be read when this one is done.
                    await lanes.pause_reading()
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


class PriorityHold:
    """An addressed turn's claim on the event loop, from its admission until its model request
    is out (`release`, idempotent) — or `max_s` after it was engaged, whichever comes first.

    A claim made `engaged=False` (a reply that may quote the bot) holds nothing until `engage`.
    While the turn waits for an API response (`api_call`), reading is not paused for it: the
    response comes over the same socket, behind the frames it would keep waiting."""

    __slots__ = ("_api_waits", "_lanes", "_max_s", "_timer", "engaged", "released")

    def __init__(self, lanes: Lanes, max_s: float, *, engaged: bool = True) -> None:
        self._lanes = lanes
        self._max_s = max_s
        self._timer: asyncio.TimerHandle | None = None
        self._api_waits = 0
        self.released = False
        self.engaged = False
        if engaged:
            self.engage()

    @property
    def pausing(self) -> bool:
        """Whether this claim keeps event frames waiting right now."""
        return self.engaged and not self.released and not self._api_waits

    def engage(self) -> None:
        """Start holding (once; nothing after `release`)."""
        if self.engaged or self.released:
            return
        self.engaged = True
        self._timer = asyncio.get_running_loop().call_later(self._max_s, self.release)
        self._lanes.add_hold(self)

    def release(self) -> None:
        if self.released:
            return
        pausing = self.pausing
        self.released = True
        if self._timer is not None:
            self._timer.cancel()
        if self.engaged:
            self._lanes.drop_hold(pausing=pausing)

    @contextlib.contextmanager
    def api_call(self) -> Iterator[None]:
        """Around an API call of the holding turn: reading goes on until its response."""
        was = self.pausing
        self._api_waits += 1
        if was:
            self._lanes.pause_changed(-1)
        try:
            yield
        finally:
            self._api_waits -= 1
            if self.pausing:
                self._lanes.pause_changed(+1)


# The hold of the addressed turn running in this task (handler tasks inherit it).
PRIORITY_HOLD: contextvars.ContextVar[PriorityHold | None] = contextvars.ContextVar(
    "pallas_priority_hold", default=None
)


def release_priority_hold() -> None:
    """Called when a turn's model request goes out: unaddressed work may start again."""
    hold = PRIORITY_HOLD.get()
    if hold is not None:
        hold.release()


def releasing_hold(call: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    """`call` (the LLM client's `complete`) releasing the calling turn's hold first."""

    async def wrapped(*args: Any, **kwargs: Any) -> Any:
        release_priority_hold()
        return await call(*args, **kwargs)

    wrapped.__wrapped__ = call  # type: ignore[attr-defined]
    return wrapped


class Lanes:
    """The two admission lanes and their depths (for the periodic counter line).

    While an addressed turn holds the loop (`hold`: from the reading of its frame until its
    model request is out, at most `hold_max_s`), no new unaddressed handler starts and the
    receive loop yields after every frame: the @'s local work gets nearly every iteration. For
    `quiet_s` after an addressed event is admitted, new unaddressed handlers start at most
    `trickle` at a time (they queue, never drop): the event loop then has short iterations
    while the @'s reply is delivered, instead of sharing each one with 32 others."""

    def __init__(
        self,
        normal: int = ADMISSION_SLOTS,
        priority: int = PRIORITY_SLOTS,
        *,
        trickle: int = QUIET_TRICKLE_SLOTS,
        quiet_s: float = PRIORITY_QUIET_S,
        hold_max_s: float = PRIORITY_HOLD_MAX_S,
        clock: Callable[[], float] = time.monotonic,
        pause_budget: PauseBudget | None = None,
    ) -> None:
        self.normal = asyncio.Semaphore(normal)
        self.priority = asyncio.Semaphore(priority)
        self.trickle = asyncio.Semaphore(trickle)
        self.waiting = {"normal": 0, "priority": 0}
        self.admitted = {"normal": 0, "priority": 0}
        self._quiet_s = quiet_s
        self._quiet_until = 0.0
        self._clock = clock
        self._hold_max_s = hold_max_s
        self._holds = 0
        self._clear = asyncio.Event()
        self._clear.set()
        self._pausing = 0
        self._read_ok = asyncio.Event()
        self._read_ok.set()
        self._pause_budget = pause_budget if pause_budget is not None else PauseBudget()
        # id(event) → (lane verdict, hold) from the frame's reading until its handler starts
        self._read: dict[int, tuple[Any, PriorityHold | None]] = {}

    @property
    def holding(self) -> bool:
        """Whether an addressed turn is preparing its model request right now."""
        return self._holds > 0

    @property
    def reading_paused(self) -> bool:
        """Whether event frames wait before parsing: a holder is doing local work (not
        waiting for an API response)."""
        return self._pausing > 0

    def hold(self, *, engaged: bool = True) -> PriorityHold:
        return PriorityHold(self, self._hold_max_s, engaged=engaged)

    def add_hold(self, hold: PriorityHold) -> None:
        self._holds += 1
        self._clear.clear()
        self.pause_changed(+1 if hold.pausing else 0)

    def drop_hold(self, *, pausing: bool = True) -> None:
        self._holds = max(self._holds - 1, 0)
        if not self._holds:
            self._clear.set()
        self.pause_changed(-1 if pausing else 0)

    def pause_changed(self, delta: int) -> None:
        self._pausing = max(self._pausing + delta, 0)
        if self._pausing:
            self._read_ok.clear()
        else:
            self._read_ok.set()

    async def pause_reading(self) -> None:
        """Let an event frame wait until no holder does local work — at most the budget's
        allowance (`pallas.onebot.read_pause`)."""
        limit = self._pause_budget.allowance()
        if limit <= 0 or not self.reading_paused:
            await asyncio.sleep(0)
            return
        started = time.monotonic()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._read_ok.wait(), limit)
        self._pause_budget.spend(time.monotonic() - started)

    def classify_at_read(self, event: Event, lane_of: Callable[[Event], Any]) -> None:
        """The event's lane, decided when its frame is read: an addressed one holds the loop
        from that moment (the receive loop starts yielding after every frame at once)."""
        verdict = lane_of(event)
        if len(self._read) >= _READ_VERDICTS_MAX:  # events that never reached a handler
            self._read.clear()
        claim = None
        if getattr(verdict, "priority", False):
            _log_priority(event, verdict)
            claim = self.hold(engaged=getattr(verdict, "certain", True))
        self._read[id(event)] = (verdict, claim)

    def take_read(self, event: Event) -> tuple[Any, PriorityHold | None] | None:
        """What `classify_at_read` decided for `event` (once), or None."""
        return self._read.pop(id(event), None)

    async def wait_clear(self) -> None:
        """Return once no addressed turn holds the loop (at once when none does)."""
        while self._holds:
            await self._clear.wait()

    def note_priority(self) -> None:
        self._quiet_until = self._clock() + self._quiet_s

    def quiet(self) -> bool:
        return self._clock() < self._quiet_until

    async def acquire(self, lane: str) -> list[asyncio.Semaphore]:
        """The semaphores taken for one event of `lane` (release them in any order)."""
        slots = self.priority if lane == "priority" else self.normal
        taken: list[asyncio.Semaphore] = []
        self.waiting[lane] += 1
        try:
            await slots.acquire()
            taken.append(slots)
            if lane == "normal":
                await self.wait_clear()
            if lane == "normal" and self.quiet():
                await self.trickle.acquire()
                taken.append(self.trickle)
        except BaseException:
            for held in taken:
                held.release()
            raise
        finally:
            self.waiting[lane] -= 1
        self.admitted[lane] += 1
        if lane == "priority":
            self.note_priority()
        return taken


def _log_priority(event: Event, verdict: Any) -> None:
    """Rare next to chatter, and most of them lead to a model call: INFO."""
    log.info(
        "addressed message %s (%s): priority lane, read at %.3f (monotonic)",
        getattr(event, "message_id", "?"),
        getattr(verdict, "reason", "?"),
        time.monotonic(),
    )


def _never_priority(event: Event) -> Any:
    return None


def admitted(
    handle: Callable[[Event], Any],
    lanes: Lanes,
    lane_of: Callable[[Event], Any] = _never_priority,
    hold: float = ADMISSION_HOLD_S,
) -> Callable[[Event], Any]:
    """`handle` started only with a free slot of its lane (`lane_of(event).priority`); the slot
    is given back when it finishes or after `hold` seconds (a reply waiting for the model does
    not keep others out). An addressed event holds the loop (`Lanes.hold`) until its model
    request is out (`releasing_hold` around the LLM client) or its handling ends."""

    async def run(event: Event) -> None:
        read = lanes.take_read(event)
        verdict, claim = read if read is not None else (lane_of(event), None)
        priority = bool(getattr(verdict, "priority", False))
        if priority and read is None:
            _log_priority(event, verdict)
        if priority and claim is None:
            claim = lanes.hold(engaged=getattr(verdict, "certain", True))
        try:
            taken = await lanes.acquire("priority" if priority else "normal")
        except BaseException:
            if claim is not None:
                claim.release()
            raise
        try:
            token = PRIORITY_HOLD.set(claim)  # the handler's task inherits it (copied context)
            try:
                task = asyncio.ensure_future(handle(event))
            finally:
                PRIORITY_HOLD.reset(token)
            try:
                await asyncio.wait({task}, timeout=hold)
            except asyncio.CancelledError:
                task.cancel()
                raise
            finally:
                for held in taken:
                    held.release()
            await task
        finally:
            if claim is not None:
                claim.release()

    return run


class GuardedAdapter(Adapter):
    received_hooks: ClassVar[list[Callable[[Event], None]]] = []
    lane_of: ClassVar[Callable[[Event], Any]] = staticmethod(_never_priority)
    lanes: ClassVar[Lanes | None] = None

    @override
    def bot_connect(self, bot: BaseBot) -> None:
        if GuardedAdapter.lanes is None:
            GuardedAdapter.lanes = Lanes()
            sys.setswitchinterval(min(sys.getswitchinterval(), GIL_SWITCH_INTERVAL_S))
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
