"""Frames read off the socket ahead of parsing, so an @ deep in a burst is parsed first.

Under a burst the event loop is busy with handlers, and frames queue in uvicorn's queue and the
kernel's socket buffer: an @ sent behind 3,000 messages was read (parsed, recorded, classified)
over a second after it was sent, and only then could it skip the queue. Now a pump task moves
every frame off the socket into `ReadAhead` as soon as the loop lets it — a cheap append, no
parsing — and a raw look at each frame (`FrameScan`: no JSON parsing) spots the ones that may
address the bot (an @ of the bot's id, a reply segment, one of the group's aliases). The
receive loop then takes such a frame first, together with the frames of *its group* queued
ahead of it, in their order; every other frame keeps its order. So a group's messages are read
(and recorded) in the order they were sent, an @ sees the lines before it, and what waits a
little longer is only other groups' chatter. Nothing is dropped; a false "urgent" only moves one
frame (and its group's) forward.

API responses (they carry the call's "echo") never queue behind events: the pump hands them to
`respond` at once, so a turn waiting for `get_msg` gets it even while reading is paused.

The buffer is bounded (`MAX_FRAMES`, `MAX_BYTES`): when it is full the pump stops taking frames,
uvicorn stops reading the socket and the peer is slowed by TCP, as before.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import NamedTuple

log = logging.getLogger("pallas.onebot")

MAX_FRAMES = 4096
MAX_BYTES = 8 * 1024 * 1024
SCAN_MAX_CHARS = 64 * 1024  # a larger frame is never expedited (no scan of megabytes)

_GROUP = re.compile(r'"group_id"\s*:\s*(\d+)')
_REPLY = '"reply"'  # a reply segment's type; in a member's text the quotes are escaped


@dataclass(frozen=True, slots=True)
class Scanned:
    data: str | bytes
    group: int | None
    urgent: bool


class Taken(NamedTuple):
    """A frame handed to the receive loop: whether it *leads* an urgent one (a frame of its
    group queued before it, taken early) and whether it may address the bot itself."""

    data: str | bytes
    lead: bool
    urgent: bool


class FrameScan:
    """The raw look at a frame: its group and whether it may address the bot (pure)."""

    def __init__(self, self_id: str, aliases: Callable[[int], Iterable[str]] | None) -> None:
        sid = re.escape(self_id)
        self._at = re.compile(rf'"qq"\s*:\s*"?{sid}(?!\d)|\[CQ:at,qq={sid}(?!\d)')
        self._aliases = aliases

    def scan(self, data: str | bytes) -> Scanned:
        if not isinstance(data, str) or len(data) > SCAN_MAX_CHARS:
            return Scanned(data, None, False)
        found = _GROUP.search(data)
        if found is None:
            return Scanned(data, None, False)
        group = int(found.group(1))
        return Scanned(data, group, self._addressed(data, group))

    def _addressed(self, data: str, group: int) -> bool:
        if _REPLY in data or self._at.search(data) is not None:
            return True
        if self._aliases is None:
            return False
        return any(_names_in(data, alias) for alias in self._aliases(group) if alias)


def _names_in(data: str, alias: str) -> bool:
    """`alias` in the frame as it is, or as an ASCII-escaped JSON string would carry it."""
    if alias in data:
        return True
    escaped = json.dumps(alias)[1:-1]
    return escaped != alias and escaped in data


def is_response_frame(data: str | bytes) -> bool:
    """The response to an API call (it carries the call's "echo" key; in a member's text the
    quotes would be escaped): a cheap look, no parsing."""
    return ('"echo"' in data) if isinstance(data, str) else (b'"echo"' in data)


class _Entry:
    __slots__ = ("frame", "taken")

    def __init__(self, frame: Scanned) -> None:
        self.frame = frame
        self.taken = False


class ReadAhead:
    """Frames waiting to be parsed, in arrival order — except that while an urgent frame waits,
    the frames of its group are taken first, up to and including it (in their order).

    Each frame sits in the arrival queue and in its group's queue (urgent ones also in the
    urgent queue); a frame taken through one is skipped in the others when it reaches their
    head, so every operation is amortised O(1), however many frames are urgent."""

    def __init__(self) -> None:
        self._order: deque[_Entry] = deque()
        self._groups: dict[int | None, deque[_Entry]] = {}
        self._urgent: deque[_Entry] = deque()
        self._count = 0
        self.chars = 0

    def __len__(self) -> int:
        return self._count

    def full(self) -> bool:
        return self._count >= MAX_FRAMES or self.chars >= MAX_BYTES

    def push(self, frame: Scanned) -> None:
        entry = _Entry(frame)
        self._order.append(entry)
        self._groups.setdefault(frame.group, deque()).append(entry)
        if frame.urgent:
            self._urgent.append(entry)
        self._count += 1
        self.chars += len(frame.data)

    def urgent_waiting(self) -> bool:
        """Whether a frame that may address the bot waits (its group's frames go first)."""
        return self._next_urgent() is not None

    def leading(self) -> bool:
        """Whether the next `pop` is a frame taken early because an urgent frame of its group
        follows it (not the urgent frame itself)."""
        urgent = self._next_urgent()
        return urgent is not None and self._head(urgent.frame.group) is not urgent

    def pop(self) -> Scanned:
        """The next frame to parse (IndexError when empty)."""
        urgent = self._next_urgent()
        if urgent is not None:
            entry = self._head(urgent.frame.group)
            assert entry is not None  # the urgent entry itself is in its group's queue
        else:
            while self._order and self._order[0].taken:
                self._order.popleft()
            entry = self._order[0]
        entry.taken = True
        self._head(entry.frame.group)  # drops it from its group's queue
        self._count -= 1
        self.chars -= len(entry.frame.data)
        if not self._count:
            self._order.clear()
        return entry.frame

    def _next_urgent(self) -> _Entry | None:
        while self._urgent and self._urgent[0].taken:
            self._urgent.popleft()
        return self._urgent[0] if self._urgent else None

    def _head(self, group: int | None) -> _Entry | None:
        """The group's earliest frame not taken yet (taken ones at the head are dropped)."""
        queue = self._groups.get(group)
        while queue and queue[0].taken:
            queue.popleft()
        if not queue:
            self._groups.pop(group, None)
            return None
        return queue[0]


class FramePump:
    """The pump task (started by the first `next`): `receive` → `ReadAhead`, each frame through
    `scan`; an API response goes to `respond` at once (False: not one after all, queue it)."""

    def __init__(
        self,
        receive: Callable[[], Awaitable[str | bytes]],
        scan: Callable[[str | bytes], Scanned],
        respond: Callable[[str | bytes], bool],
    ) -> None:
        self._receive = receive
        self._scan = scan
        self._respond = respond
        self.ahead = ReadAhead()
        self._arrived = asyncio.Event()
        self._space = asyncio.Event()
        self._space.set()
        self._error: BaseException | None = None
        self._task: asyncio.Task[None] | None = None

    async def next(self) -> Taken:
        """The next frame to parse; raises what ended the socket once all are taken."""
        if self._task is None:
            self._task = asyncio.create_task(self._run())
        while not self.ahead:
            if self._error is not None:
                raise self._error
            self._arrived.clear()
            await self._arrived.wait()
        lead = self.ahead.leading()
        frame = self.ahead.pop()
        if not self.ahead.full():
            self._space.set()
        return Taken(frame.data, lead, frame.urgent)

    def urgent_waiting(self) -> bool:
        return self.ahead.urgent_waiting()

    async def _run(self) -> None:
        try:
            while True:
                while self.ahead.full():
                    self._space.clear()
                    await self._space.wait()
                data = await self._receive()
                if not self._take(data):
                    self.ahead.push(self._scanned(data))
                self._arrived.set()
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # the socket closed: `next` raises it once drained
            self._error = exc
            self._arrived.set()

    def _take(self, data: str | bytes) -> bool:
        """Whether `respond` took the frame (an API response); a failure there never ends
        the socket: the frame then queues and the receive loop handles it like any other."""
        if not is_response_frame(data):
            return False
        try:
            return self._respond(data)
        except Exception:
            log.exception("resolving an API response off the read-ahead failed")
            return False

    def _scanned(self, data: str | bytes) -> Scanned:
        try:
            return self._scan(data)
        except Exception:  # a broken alias source must not end the socket
            log.exception("the raw look at a frame failed; it keeps its place")
            return Scanned(data, None, False)

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()


__all__ = [
    "MAX_BYTES",
    "MAX_FRAMES",
    "FramePump",
    "FrameScan",
    "ReadAhead",
    "Scanned",
    "Taken",
    "is_response_frame",
]
