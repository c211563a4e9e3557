"""Admission of events to NoneBot's handlers: two lanes, and an addressed turn's hold.

`Lanes` keeps the normal and priority slots and the holds; `PriorityHold` is one addressed
turn's claim on the event loop from the reading of its frame until its model request goes out
(the turn releases it: `pallas.turn.context.LoopHold`); `admitted` wraps the bot's event
handling with both. See `pallas.onebot.adapter` for how they work together.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, Protocol

from pallas.onebot.read_pause import PauseBudget

log = logging.getLogger("pallas.onebot")

ADMISSION_SLOTS = 32
PRIORITY_SLOTS = 8
ADMISSION_HOLD_S = 0.2
PRIORITY_QUIET_S = 1.0
QUIET_TRICKLE_SLOTS = 2
PRIORITY_HOLD_MAX_S = 1.5
# Addressed turns preparing at once before a frame that may address the bot waits too: their
# database reads overlap (a group's first @ after a restart loads its entries; at 1, 20 such @s
# in a burst waited ~105 ms each for the one before), while CPU-bound turns merely interleave.
PARALLEL_HOLDS = 4


class PriorityHold:
    """An addressed turn's claim on the event loop, from its admission until its model request
    is out (`release`, idempotent) — or `max_s` after it was engaged, whichever comes first.

    A claim made `engaged=False` (a reply that may quote the bot) holds nothing until `engage`.
    While the turn waits for an API response (`api_call`), reading is not paused for it: the
    response comes over the same socket, behind the frames it would keep waiting."""

    __slots__ = ("_api_waits", "_lanes", "_max_s", "_timer", "adopted", "engaged", "released")

    def __init__(self, lanes: Lanes, max_s: float, *, engaged: bool = True) -> None:
        self._lanes = lanes
        self._max_s = max_s
        self._timer: asyncio.TimerHandle | None = None
        self._api_waits = 0
        self.released = False
        self.engaged = False
        self.adopted = False  # a detached chat turn releases it, not the end of the handling
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

    def adopt(self) -> None:
        """A turn running detached from NoneBot's dispatch keeps the claim past the end of the
        handling and releases it itself (or `max_s` after it was engaged)."""
        self.adopted = True

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


# The hold of the addressed event whose handling runs in this task. The edge hands the hold to
# the turn explicitly (`Arrival.hold`); this variable serves the one path the edge does not
# call itself: NoneBot's own `get_msg` for a reply, made inside `Bot.handle_event` before the
# handlers run (`GuardedAdapter._call_api` lets reading go on while that response is awaited).
PRIORITY_HOLD: contextvars.ContextVar[PriorityHold | None] = contextvars.ContextVar(
    "pallas_priority_hold", default=None
)


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
        parallel_holds: int = PARALLEL_HOLDS,
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
        self._parallel = max(parallel_holds, 1)
        self._read_ok = asyncio.Event()  # no holder does local work: any frame may be read
        self._read_ok.set()
        self._urgent_ok = asyncio.Event()  # fewer than `parallel_holds` do: an @ may be read
        self._urgent_ok.set()
        self._pause_budget = pause_budget if pause_budget is not None else PauseBudget()

    @property
    def holding(self) -> bool:
        """Whether an addressed turn is preparing its model request right now."""
        return self._holds > 0

    @property
    def reading_paused(self) -> bool:
        """Whether event frames wait before parsing: a holder is doing local work (not
        waiting for an API response)."""
        return self._pausing > 0

    def paused_for(self, urgent: bool) -> bool:
        """Whether a frame waits before parsing: any frame while a holder does local work; a
        frame that may address the bot only while `parallel_holds` of them do."""
        return self._pausing >= self._parallel if urgent else self.reading_paused

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
        _toggle(self._read_ok, self._pausing == 0)
        _toggle(self._urgent_ok, self._pausing < self._parallel)

    async def pause_reading(self, urgent: bool = False) -> None:
        """Let an event frame wait until it may be read (`paused_for`) — at most the budget's
        allowance (`pallas.onebot.read_pause`)."""
        limit = self._pause_budget.allowance()
        if limit <= 0 or not self.paused_for(urgent):
            await asyncio.sleep(0)
            return
        started = time.monotonic()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for((self._urgent_ok if urgent else self._read_ok).wait(), limit)
        self._pause_budget.spend(time.monotonic() - started)

    async def wait_clear(self) -> None:
        """Return once no addressed turn holds the loop (at once when none does)."""
        while self._holds:
            await self._clear.wait()

    async def after_holds(self) -> None:
        """One loop round, and then until no addressed turn holds the loop (background work
        that would compete with its reads, e.g. a group warm-up's next load)."""
        await asyncio.sleep(0)
        await self.wait_clear()

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


def _toggle(flag: asyncio.Event, on: bool) -> None:
    if on:
        flag.set()
    else:
        flag.clear()


def log_priority(event: Any, verdict: Any) -> None:
    """Rare next to chatter, and most of them lead to a model call: INFO."""
    log.info(
        "addressed message %s (%s): priority lane, read at %.3f (monotonic)",
        getattr(event, "message_id", "?"),
        getattr(verdict, "reason", "?"),
        time.monotonic(),
    )


class Admission(Protocol):
    """An event's lane verdict and its hold on the loop (None, None: the normal lane)."""

    def __call__(self, event: Any) -> tuple[Any, PriorityHold | None]: ...


def normal_lane(event: Any) -> tuple[Any, PriorityHold | None]:
    return None, None


def admitted(
    handle: Callable[[Any], Awaitable[None]],
    lanes: Lanes,
    admission: Admission = normal_lane,
    hold: float = ADMISSION_HOLD_S,
) -> Callable[[Any], Awaitable[None]]:
    """`handle` started only with a free slot of its lane (`admission(event)`: the verdict's
    `priority`, and the hold an addressed event claimed when its frame was read); the slot is
    given back when it finishes or after `hold` seconds (a reply waiting for the model does not
    keep others out). The hold ends when the turn releases it (its model request is out) or
    when the handling ends."""

    async def run(event: Any) -> None:
        verdict, claim = admission(event)
        priority = bool(getattr(verdict, "priority", False))
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
            if claim is not None and not claim.adopted:
                claim.release()

    return run
