"""A member's archived topics for the old-topics source, kept in process between turns.

`session_topic` rows of a member change in two ways only:

- a session summary archives a new topic, right after the member's session gets its new
  summary row (`session_summary`); so a cached entry remembers which summary row was the
  member's latest when it was loaded, and a different latest summary means "reload". (In the
  moment between the two writes the new topic's text *is* the live summary, which the source
  excludes anyway.) A topic archived through the source's own repository is applied in place
  (`added`: the new row first, with the new summary as the marker), so the member's next turn
  does not read the topics back from the database.
- a recall bumps access counts; the source does that itself, and `touched` applies the same
  change to the cached rows.

Entries expire after `ttl_s` of the turn clock (recalls made by another process sharing the
database are seen within that time) and the cache holds at most `max_members` members.

A member with no topic at all costs no query either: the group's topic holders (one DISTINCT
read per group, kept for `ttl_s` like the rows, joined by every topic `added` here) prove it;
a load that raced a new topic is not kept. Such a member gets an empty entry, so the first
topic a summary archives for them is applied in place like any other (no read on their next
turn).

The scoring form of a member's rows (candidates, scope filter, BM25 / posting index; see
`topic_index`) is kept too, for the `max_prepared` members recalled last: a turn over unchanged
rows only scores them. It is rebuilt when the rows list is replaced (a new topic, a recall, a
reload) or another live summary is excluded.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace

from cachetools import FIFOCache, LRUCache

from pallas.features.session.repository import SessionTopic, SessionTopicRepository
from pallas.features.session.topic_index import PreparedTopics, prepare_topics

_Key = tuple[int, int, int, int]  # bot, group, user, limit


@dataclass(slots=True)
class _Entry:
    marker: tuple[int, float, str] | None  # the member's latest summary row when loaded
    loaded_at: float
    rows: list[SessionTopic]


@dataclass(slots=True)
class _Holders:
    loaded_at: float
    users: set[int]


class TopicCache:
    def __init__(
        self,
        *,
        ttl_s: float = 120.0,
        max_members: int = 4096,
        max_groups: int = 2048,
        max_prepared: int = 256,
    ) -> None:
        self.ttl_s = ttl_s
        self.max_members = max_members
        self.max_groups = max_groups
        self.max_prepared = max_prepared
        # the member / group used least recently goes first; reading a stale entry is not a
        # use (FIFOCache: a key set again moves to the end)
        self._entries: FIFOCache[_Key, _Entry] = FIFOCache(max_members)
        # the scoring form of the members recalled lately (`topic_index`), bounded LRU
        self._prepared: LRUCache[_Key, PreparedTopics] = LRUCache(max_prepared)
        self._holders: FIFOCache[tuple[int, int], _Holders] = FIFOCache(max_groups)
        self._added: dict[tuple[int, int], int] = {}  # topics added per group (races a load)
        self._epoch = 0  # bumped when `_added` is reset

    async def for_subject(
        self,
        repo: SessionTopicRepository,
        key: _Key,
        *,
        marker: tuple[int, float, str] | None,
        now: float,
    ) -> list[SessionTopic]:
        """The member's newest `limit` topics, newest first (what `repo.for_subject` returns)."""
        entry = self._entries.get(key)
        if entry is not None and entry.marker == marker and 0 <= now - entry.loaded_at < self.ttl_s:
            self._entries[key] = entry
            return entry.rows
        bot_id, group_id, user_id, limit = key
        holders = await self._group_holders(repo, bot_id, group_id, now)
        if holders is not None and user_id not in holders:
            rows: list[SessionTopic] = []  # no topic for this member here: kept too, so the
            # first topic archived for them (`added`) is seen next turn without a read
        else:
            rows = await repo.for_subject(bot_id, group_id, user_id, limit=limit)
        self._entries[key] = _Entry(marker, now, rows)
        return rows

    async def prewarm(
        self, repo: SessionTopicRepository, bot_id: int, group_id: int, now: float
    ) -> None:
        """Load the group's topic holders (a member without topics then costs no query)."""
        await self._group_holders(repo, bot_id, group_id, now)

    async def _group_holders(
        self, repo: SessionTopicRepository, bot_id: int, group_id: int, now: float
    ) -> set[int] | None:
        """The members with a topic in the group; None when a new topic raced the read."""
        group = (bot_id, group_id)
        holders = self._holders.get(group)
        if holders is not None and 0 <= now - holders.loaded_at < self.ttl_s:
            self._holders[group] = holders
            return holders.users
        seen = (self._epoch, self._added.get(group, 0))
        users = await repo.user_ids(bot_id, group_id)
        if (self._epoch, self._added.get(group, 0)) != seen:
            return None
        self._holders[group] = _Holders(now, users)
        return users

    def prepared(
        self,
        key: _Key,
        rows: Sequence[SessionTopic],
        *,
        exclude_text: str,
        allowed: Collection[str],
        bm25: tuple[float, float],
    ) -> PreparedTopics:
        """The scoring form of `rows` (what `for_subject` returned for `key`): kept while
        the rows are the same list (`added` and `touched` replace it, a reload makes a new
        one), rebuilt otherwise with the index kept when its ids and texts are unchanged."""
        allowed_set = frozenset(allowed)
        kept = self._prepared.get(key)  # now the most recently used (replaced below if stale)
        if kept is not None and kept.fits(rows, exclude_text, allowed_set, bm25):
            return kept
        made = prepare_topics(
            rows, exclude_text=exclude_text, allowed=allowed_set, k1=bm25[0], b=bm25[1],
            previous=kept,
        )  # fmt: skip
        self._prepared[key] = made
        return made

    def touched(self, key: _Key, row_ids: Collection[int], now: float) -> None:
        """Apply a recall (access count + 1, last access = now) to the cached rows."""
        entry = self._entries.get(key)
        if entry is None:
            return
        entry.rows = [
            replace(t, access_count=t.access_count + 1, last_access_at=now)
            if t.row_id in row_ids
            else t
            for t in entry.rows
        ]

    def added(self, topic: SessionTopic, marker: tuple[int, float, str] | None) -> None:
        """A topic was stored (the newest row of its member): put it first in the member's
        kept rows, as `repo.for_subject` would now return them, and remember `marker`."""
        member = (topic.bot_id, topic.group_id, topic.user_id)
        group = (topic.bot_id, topic.group_id)
        if len(self._added) > 4 * self.max_groups:
            self._added.clear()
            self._epoch += 1  # loads in flight then do not keep what they read
        self._added[group] = self._added.get(group, 0) + 1
        holders = self._holders.get(group)
        if holders is not None:
            holders.users.add(topic.user_id)
        for key, entry in self._entries.items():
            if key[:3] == member:
                entry.rows = [topic, *entry.rows][: key[3]]
                entry.marker = marker

    def clear(self) -> None:
        self._entries.clear()
        self._holders.clear()
        self._prepared.clear()
