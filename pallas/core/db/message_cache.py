"""The newest messages of each group kept warm in process, fed where messages are recorded.

The reply path needs a group's last few lines (the timeline) and, for a quoted line, that one
message. `MessageCache.note` is called with every message handed to the message writer (member
lines at the OneBot edge, the bot's own sent lines) and every batch stored through the
repository (the runtime's `IngestEvents`, which the cache subscribes to when built), so the
newest rows are in memory before they are even committed; `recent` answers as
`MessageRepository.recent` does (newest `limit`, oldest first, ordered by time then by arrival)
without a query and without waiting for the writer.

A group's window is built by its first read (after a restart or an LRU eviction): the newest
`per_group` rows are read once and merged with the group's messages the writer has not stored
yet (`unstored`, listed before the read: a message leaves that list only once committed, so each
is in the read or in the list), without waiting for the writer — under a burst a flush waited
for one or two batches of other groups' rows (~100 ms on a group's first @ after a restart);
without `unstored` the writer is flushed first. Messages of that group noted meanwhile (a busy
group keeps talking) are kept aside and placed into the new window as if it had existed when
they arrived (a duplicate of a loaded row is ignored). Only when more than `per_group` of them
arrive during one read is the read answered from the DB and the window built by a later read.

A window is a group's chat as every account reads it (`message_scope`): a line noted by two
accounts (the same line key, `pallas.core.lines`) is held once, as the table stores it once; a
private chat's window is the account's own.

Stored form: a noted message is normalised as the database returns it (the same truncation and
defaults; `row_id` stays 0, "not known"). Duplicates of a (bot, group, message_id) already held are
ignored as the table's unique index ignores them; a message older than the window's oldest
row is not added (the DB may or may not hold it, and it is outside the window either way).
Messages the database would refuse (ids past 64 bits, a time that is not finite) are skipped.

Bounded: `per_group` messages per group, LRU over `max_groups` groups.
"""

from __future__ import annotations

import bisect
import json
import math
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from itertools import count

from cachetools import FIFOCache

from pallas.core.db.ingest_events import IngestEvents
from pallas.core.db.repositories.messages import MAX_STORED_CHARS, MessageRepository
from pallas.core.records import StoredMessage
from pallas.core.single_flight import SingleFlight

_INT64 = 2**63


@dataclass
class _Window:
    keys: list[tuple[float, int, int]] = field(default_factory=list)  # (time, phase, seq)
    rows: list[StoredMessage] = field(default_factory=list)
    ids: set[tuple[int, int]] = field(default_factory=set)  # (account, message id)
    lines: set[str] = field(default_factory=set)  # line keys held (another account's copy)
    complete: bool = False  # the window holds the group's whole history


def stored_form(message: StoredMessage) -> StoredMessage | None:
    """`message` as the message table would return it (None: the table refuses it)."""
    ints = (message.bot_id, message.group_id, message.message_id, message.user_id)
    if any(not -_INT64 <= v < _INT64 for v in ints) or not math.isfinite(message.time):
        return None
    if message.reply_to is not None and not -_INT64 <= message.reply_to < _INT64:
        return None
    try:
        segments = tuple(json.loads(json.dumps(list(message.segments))))
    except (TypeError, ValueError):
        return None
    return replace(
        message,
        text=message.text[:MAX_STORED_CHARS],
        raw_message=message.raw_message[:MAX_STORED_CHARS],
        segments=segments,
        card=message.card[:128],
        nickname=message.nickname[:128],
        role=(message.role or "member")[:16],
        row_id=0,
    )


def _scope(bot_id: int, group_id: int) -> tuple[int, int]:
    """A window's key: (0, group) for a group (every account's rows, as `message_scope`),
    (bot, 0) for the account's private chats."""
    return (0, group_id) if group_id else (bot_id, 0)


class MessageCache:
    def __init__(
        self,
        repo: MessageRepository,
        *,
        flush: Callable[[int], Awaitable[None]] | None = None,
        unstored: Callable[[int], Sequence[StoredMessage]] | None = None,
        per_group: int = 24,
        max_groups: int = 1024,
        events: IngestEvents | None = None,
    ) -> None:
        """`events`: the runtime's ingest events, which the cache follows from now on (without
        them, whoever records messages calls `note` / `note_many`)."""
        self._repo = repo
        self._flush = flush
        self._unstored = unstored
        self._per_group = per_group
        # LRU over groups: a reader's hit moves the group last (FIFOCache: a key set again
        # moves to the end), a message noted into a window does not
        self._groups: FIFOCache[tuple[int, int], _Window] = FIFOCache(max_groups)
        # group → messages noted while its window loads (None: too many, give up this load)
        self._loading: dict[tuple[int, int], list[StoredMessage] | None] = {}
        # group → its window's load in flight: a second reader waits for it (a reader that
        # went to the DB instead could miss rows the writer has not committed yet)
        self._inflight: SingleFlight[tuple[int, int], _Window | None] = SingleFlight()
        self._seq = count(1)
        if events is not None:
            events.subscribe(submitted=self.note, stored=self.note_many)

    def note(self, message: StoredMessage) -> None:
        """A message handed to the writer (or stored through the repository)."""
        key = _scope(message.bot_id, message.group_id)
        if key in self._loading:
            arrived = self._loading[key]
            if arrived is not None and len(arrived) < self._per_group:
                arrived.append(message)
            else:
                self._loading[key] = None
        window = self._groups.get(key)
        if window is None or (message.bot_id, message.message_id) in window.ids:
            return
        if message.line_key and message.line_key in window.lines:
            return  # another account's copy of a line held
        stored = stored_form(message)
        if stored is None:
            return
        sort_key = (stored.time, 1, next(self._seq))
        at = bisect.bisect(window.keys, sort_key)
        if at == 0 and window.keys and not window.complete:
            return  # older than the window: not ours to place
        window.keys.insert(at, sort_key)
        window.rows.insert(at, stored)
        window.ids.add((stored.bot_id, stored.message_id))
        if stored.line_key:
            window.lines.add(stored.line_key)
        if len(window.rows) > self._per_group:
            window.ids.discard((window.rows[0].bot_id, window.rows[0].message_id))
            window.lines.discard(window.rows[0].line_key)
            del window.keys[0], window.rows[0]
            window.complete = False

    def note_many(self, messages: Sequence[StoredMessage]) -> None:
        for message in messages:
            self.note(message)

    async def recent(self, bot_id: int, group_id: int, *, limit: int) -> list[StoredMessage]:
        """The newest `limit` messages of a group, oldest first (as the repository)."""
        if limit <= 0:
            return []
        window = await self._window(bot_id, group_id)
        if window is None or (limit > len(window.rows) and not window.complete):
            if self._flush is not None:
                await self._flush(group_id)  # the rows noted before this read are stored
            return await self._repo.recent(bot_id, group_id, limit=limit)
        return window.rows[-limit:]

    async def find_by_message_ids(
        self, bot_id: int, group_id: int, message_ids: Sequence[int]
    ) -> dict[int, StoredMessage]:
        """As the repository (the rows `bot_id` stored: ids are per account); messages inside
        a warm window come from memory."""
        window = self._groups.get(_scope(bot_id, group_id))
        found: dict[int, StoredMessage] = {}
        if window is not None:
            wanted = {i for i in message_ids if (bot_id, i) in window.ids}
            found = {
                m.message_id: m
                for m in window.rows
                if m.message_id in wanted and m.bot_id == bot_id
            }
        missing = [i for i in message_ids if i not in found]
        if missing:
            found.update(await self._repo.find_by_message_ids(bot_id, group_id, missing))
        return found

    async def _window(self, bot_id: int, group_id: int) -> _Window | None:
        key = _scope(bot_id, group_id)
        window = self._groups.get(key)
        if window is not None:
            self._groups[key] = window  # the most recently read
            return window
        return await self._inflight.run(key, lambda: self._load(key))

    async def _load(self, key: tuple[int, int]) -> _Window | None:
        bot_id, group_id = key  # bot 0: a group's window (any account's rows)
        self._loading[key] = []
        try:
            unstored = self._unstored_rows(bot_id, group_id)
            if unstored is None and self._flush is not None:
                await self._flush(group_id)  # this group's rows noted before are stored
            rows = await self._repo.recent(bot_id, group_id, limit=self._per_group)
        finally:
            arrived = self._loading.pop(key, None)
        if arrived is None:
            return None  # a flood arrived meanwhile: build the window next time
        window = _Window(
            keys=[(m.time, 0, m.row_id or 0) for m in rows],
            rows=[replace(m, row_id=0) for m in rows],
            ids={(m.bot_id, m.message_id) for m in rows},
            lines={m.line_key for m in rows if m.line_key},
            complete=len(rows) < self._per_group,
        )
        self._groups[key] = window  # the least recently read group goes when full
        # as if the window had been there when they arrived (a stored duplicate is ignored)
        self.note_many([*(unstored or ()), *arrived])
        return window

    def _unstored_rows(self, bot_id: int, group_id: int) -> list[StoredMessage] | None:
        if self._unstored is None:
            return None
        key = (bot_id, group_id)
        return [m for m in self._unstored(group_id) if _scope(m.bot_id, m.group_id) == key]
