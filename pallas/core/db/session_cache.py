"""Session windows kept warm in process: the reply path reads no session rows from the DB.

`SessionCache` answers the three session reads of a REPLY turn — a member's newest turns, the
member's latest summary and the group's newest turns of other members — with the same results
as `ChatSessionRepository`, row ids included. It listens to the repository: stored turns join
the windows (a read while turns of the group are still queued write-behind flushes them first,
one commit, only when the group speaks again within the linger); a summary rewrite or a
`/forget` drops the member's and the group's windows, which the next read rebuilds from the DB
(one query, after a restart too).

A member the bot never talked to in a group costs no query: the group's *speakers* (the user
ids with any session row there, one DISTINCT read per group, kept up to date by the same
listener) prove the member's window empty and summary-less. Concurrent reads of one cold window
share one load.

Bounded: `user_window` turns per member, `group_window` turns per group, LRU over
`max_users` members and `max_groups` groups (window and speaker sets). A read wider than a
window that does not hold the whole history goes to the DB, as do reads racing a change of the
same window.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass

from cachetools import FIFOCache

from pallas.core.db.repositories.chat_sessions import ChatSessionRepository
from pallas.core.records import SessionTurn
from pallas.core.single_flight import SingleFlight

_Key = tuple[int, ...]  # (bot, group, user) for a member window, (bot, group) for a group

_UNSET = object()


@dataclass
class _Window:
    turns: deque[SessionTurn]
    complete: bool  # holds the whole history (the DB had fewer rows than the window)
    summary: object = _UNSET  # latest summary row (SessionTurn | None), for member windows


# Windows by key, the least recently read first out. A read through `_read` is a use; the
# listener's reads (a window updated in place) are not. FIFOCache: a key set again moves last.
_Lru = FIFOCache[_Key, _Window]


def _read(lru: _Lru, key: _Key) -> _Window | None:
    window = lru.get(key)
    if window is not None:
        lru[key] = window  # the most recently read
    return window


class SessionCache:
    def __init__(
        self,
        repo: ChatSessionRepository,
        *,
        user_window: int = 48,
        group_window: int = 48,
        max_users: int = 4096,
        max_groups: int = 2048,
    ) -> None:
        self._repo = repo
        self._user_window = user_window
        self._group_window = group_window
        self._users: _Lru = FIFOCache(max_users)
        self._groups: _Lru = FIFOCache(max_groups)
        # (bot, group) → the user ids with any session row there (the least recently read
        # group first out)
        self._speakers: FIFOCache[_Key, set[int]] = FIFOCache(max_groups)
        self._loads: SingleFlight[_Key, _Window | None] = SingleFlight()  # one per window
        self._speaker_loads: SingleFlight[_Key, set[int] | None] = SingleFlight()  # per group
        self._summary_loads: SingleFlight[_Key, SessionTurn | None] = SingleFlight()  # per member
        self._changes: dict[_Key, int] = {}  # bumped by every change of a window
        self._epoch = 0  # bumped when `_changes` is reset
        repo.subscribe(self)  # the repository tells its warm cache of every change

    @classmethod
    def of(cls, repo: ChatSessionRepository) -> SessionCache:
        """The one warm cache of this repository instance (made on first use)."""
        for listener in repo.listeners:
            if isinstance(listener, cls):
                return listener
        return cls(repo)

    # -- listener --------------------------------------------------------------------------
    def appended(self, turns: Sequence[SessionTurn]) -> None:
        for turn in turns:
            user_key = (turn.bot_id, turn.group_id, turn.user_id)
            group_key = (turn.bot_id, turn.group_id)
            self._bump(user_key)
            self._bump(group_key)
            speakers = self._speakers.get(group_key)
            if speakers is not None:
                speakers.add(turn.user_id)
            window = self._users.get(user_key)
            if window is not None:
                _push(window, turn)
                if turn.is_summary:
                    window.summary = turn
            window = self._groups.get(group_key)
            if window is not None and not turn.is_summary:
                _push(window, turn)

    def cleared(self, bot_id: int, group_id: int | None, user_id: int) -> None:
        for key in [k for k in self._users if k[0] == bot_id and k[2] == user_id]:
            if group_id is None or key[1] == group_id:
                self._bump(key)
                del self._users[key]
        for key in [k for k in self._groups if k[0] == bot_id]:
            if group_id is None or key[1] == group_id:
                self._bump(key)
                del self._groups[key]
        for key in [k for k in self._speakers if k[0] == bot_id]:
            if group_id is None or key[1] == group_id:
                self._bump(key)
                self._speakers[key].discard(user_id)

    def summarised(self, summary: SessionTurn, deleted_row_ids: Sequence[int]) -> None:
        """A summary replaced older turns: the windows drop them and the member's gains it.

        A window holds a group's or member's newest rows, so without the deleted ones it still
        holds the newest rows there are (fewer of them); the summary row is the newest row."""
        deleted = set(deleted_row_ids)
        user_key = (summary.bot_id, summary.group_id, summary.user_id)
        group_key = (summary.bot_id, summary.group_id)
        for key, lru in ((user_key, self._users), (group_key, self._groups)):
            self._bump(key)
            window = lru.get(key)
            if window is not None:
                kept = [t for t in window.turns if t.row_id not in deleted]
                window.turns = deque(kept, maxlen=window.turns.maxlen)
        window = self._users.get(user_key)
        if window is not None:
            _push(window, summary)
            window.summary = summary

    def _bump(self, key: _Key) -> None:
        self._changes[key] = self._changes.get(key, 0) + 1
        if len(self._changes) > 4 * (self._users.maxsize + self._groups.maxsize):
            self._changes.clear()  # loads in flight then simply do not cache their result
            self._epoch += 1

    def _version(self, key: _Key) -> tuple[int, int]:
        return self._epoch, self._changes.get(key, 0)

    # -- reads -----------------------------------------------------------------------------
    async def recent_for_user(
        self, bot_id: int, group_id: int, user_id: int, *, limit: int
    ) -> list[SessionTurn]:
        await self._repo.flush_group(bot_id, group_id)  # its queued turns first
        window = await self._user(bot_id, group_id, user_id)
        if window is None or (limit > len(window.turns) and not window.complete):
            return await self._repo.recent_for_user(bot_id, group_id, user_id, limit=limit)
        return list(window.turns)[-limit:] if limit > 0 else []

    async def latest_summary(self, bot_id: int, group_id: int, user_id: int) -> SessionTurn | None:
        await self._repo.flush_group(bot_id, group_id)  # its queued turns first
        window = await self._user(bot_id, group_id, user_id)
        if window is None:
            return await self._repo.latest_summary(bot_id, group_id, user_id)
        if window.summary is _UNSET:
            key = (bot_id, group_id, user_id)
            seen = self._version(key)
            summary = await self._summary_loads.run(
                key,
                lambda: self._repo.latest_summary(bot_id, group_id, user_id),
            )
            if self._version(key) != seen:
                return summary
            window.summary = summary
        return window.summary  # type: ignore[return-value]

    async def recent_for_group(
        self, bot_id: int, group_id: int, *, limit: int, exclude_user_id: int | None = None
    ) -> list[SessionTurn]:
        await self._repo.flush_group(bot_id, group_id)  # its queued turns first
        key = (bot_id, group_id)
        window = _read(self._groups, key)
        if window is None:
            window = await self._load(
                key, self._groups, self._group_window, self._repo.recent_for_group(
                    bot_id, group_id, limit=self._group_window
                )
            )  # fmt: skip
        if window is not None:
            turns = [t for t in window.turns if t.user_id != exclude_user_id]
            if len(turns) >= limit or window.complete:
                return turns[-limit:] if limit > 0 else []
        return await self._repo.recent_for_group(
            bot_id, group_id, limit=limit, exclude_user_id=exclude_user_id
        )

    async def prewarm(self, bot_id: int, group_id: int) -> None:
        """Load the group's speakers and newest turns (its first @ then reads no row)."""
        await self._group_speakers(bot_id, group_id)
        await self.recent_for_group(bot_id, group_id, limit=0)

    async def _user(self, bot_id: int, group_id: int, user_id: int) -> _Window | None:
        key = (bot_id, group_id, user_id)
        window = _read(self._users, key)
        if window is not None:
            return window
        speakers = await self._group_speakers(bot_id, group_id)
        if speakers is not None and user_id not in speakers and key not in self._loads:
            window = _Window(deque(maxlen=self._user_window), complete=True, summary=None)
            self._users[key] = window  # never talked to the bot here: nothing to read
            return window
        return await self._loads.run(
            key,
            lambda: self._load(
                key,
                self._users,
                self._user_window,
                self._repo.recent_for_user(bot_id, group_id, user_id, limit=self._user_window),
            ),
        )

    async def _group_speakers(self, bot_id: int, group_id: int) -> set[int] | None:
        """The group's speakers (one DB read per group, then kept by the listener); None
        when a change raced the read."""
        key = (bot_id, group_id)
        speakers = self._speakers.get(key)
        if speakers is not None:
            self._speakers[key] = speakers  # the most recently read
            return speakers
        return await self._speaker_loads.run(key, lambda: self._load_speakers(key))

    async def _load_speakers(self, key: _Key) -> set[int] | None:
        seen = self._version(key)
        loaded = await self._repo.user_ids(key[0], key[1])
        if self._version(key) != seen:
            return None
        return self._speakers.setdefault(key, loaded)

    async def _load(
        self, key: _Key, lru: _Lru, width: int, rows_coro: Awaitable[list[SessionTurn]]
    ) -> _Window | None:
        """One DB read; cached only when nothing changed the window meanwhile."""
        seen = self._version(key)
        rows = await rows_coro
        if self._version(key) != seen:
            return None
        window = _Window(deque(rows, maxlen=width), complete=len(rows) < width)
        lru[key] = window
        return window


def _push(window: _Window, turn: SessionTurn) -> None:
    if window.turns.maxlen is not None and len(window.turns) == window.turns.maxlen:
        window.complete = False
    window.turns.append(turn)
