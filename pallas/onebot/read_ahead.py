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
import re
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass

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


class ReadAhead:
    """Frames waiting to be parsed, in arrival order — except that the first urgent one is
    taken first together with the frames of its group ahead of it (in their order)."""

    def __init__(self) -> None:
        self._frames: deque[Scanned] = deque()
        self._express: deque[Scanned] = deque()
        self._urgent = 0  # urgent frames in `_frames`
        self.chars = 0

    def __len__(self) -> int:
        return len(self._frames) + len(self._express)

    def leading(self) -> bool:
        """Whether the next `pop` is a frame taken early because an urgent frame of its group
        follows it (not the urgent frame itself)."""
        if not self._express and self._urgent:
            self._expedite()
        return bool(self._express) and not self._express[0].urgent

    def urgent_waiting(self) -> bool:
        """Whether a frame that may address the bot (or its group's frames before it) waits."""
        return bool(self._express) or self._urgent > 0

    def full(self) -> bool:
        return len(self) >= MAX_FRAMES or self.chars >= MAX_BYTES

    def push(self, frame: Scanned) -> None:
        self._frames.append(frame)
        self.chars += len(frame.data)
        self._urgent += frame.urgent

    def pop(self) -> Scanned:
        """The next frame to parse (IndexError when empty)."""
        if not self._express and self._urgent:
            self._expedite()
        frame = self._express.popleft() if self._express else self._frames.popleft()
        self.chars -= len(frame.data)
        return frame

    def _expedite(self) -> None:
        """Move the first urgent frame, and its group's frames ahead of it, to the express
        queue (one pass; urgent frames are rare next to chatter)."""
        rest: deque[Scanned] = deque()
        while self._frames:
            frame = self._frames.popleft()
            if frame.urgent:
                self._urgent -= 1
                self._express.extend(f for f in rest if f.group == frame.group)
                rest = deque(f for f in rest if f.group != frame.group)
                self._express.append(frame)
                break
            rest.append(frame)
        rest.extend(self._frames)
        self._frames = rest


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

    async def next(self) -> tuple[str | bytes, bool]:
        """The next frame to parse, and whether it *leads* an urgent one (a frame of its group
        queued before it, taken early); raises what ended the socket once all are taken."""
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
        return frame.data, lead

    def urgent_waiting(self) -> bool:
        return self.ahead.urgent_waiting()

    async def _run(self) -> None:
        try:
            while True:
                while self.ahead.full():
                    self._space.clear()
                    await self._space.wait()
                data = await self._receive()
                if is_response_frame(data) and self._respond(data):
                    continue
                self.ahead.push(self._scan(data))
                self._arrived.set()
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # the socket closed: `next` raises it once drained
            self._error = exc
            self._arrived.set()

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
    "is_response_frame",
]
