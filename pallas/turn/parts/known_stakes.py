"""What the bot remembers, as stake words for the route step — without a read on the ingest path.

An unaddressed line may become an ambient reply only when the bot has a stake in it
(`routing.ambient_stake`). Besides its worldbooks, what it remembers is one: the group's
knowledge and group memory (`knowledge`), the speaker's earlier conversations with it
(`remembered_topic`: archived session topics) and what it knows about the speaker
(`member_memory`: their live person facts).

`peek` is what the route step calls for every routed line: dictionary lookups only. A group or
member whose words are missing or older than `ttl_s` is queued, and one background task loads
them (two indexed reads a member, one a group, a yield between loads), so the member's next line
finds them. A failing load is logged once and retried after `ttl_s`. Bounded: `max_entries`
members and groups each, least recently loaded dropped first.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from cachetools import FIFOCache

from pallas.core.clock import Clock
from pallas.features.memory import (
    GROUP_MEMORY,
    KNOWLEDGE,
    PERSON_FACTS,
    MemoryRepository,
    readable_scopes,
)
from pallas.features.memory_commands import heading_of, stake_words
from pallas.features.session import SessionTopicRepository
from pallas.routing import StakeKeys

log = logging.getLogger("pallas.chat")

GROUP_ITEMS = 300  # knowledge + group memory rows read per group
MEMBER_FACTS = 50
MEMBER_TOPICS = 5


@dataclass(frozen=True, slots=True)
class _Words:
    loaded_at: float
    words: frozenset[str]
    topics: frozenset[str] = frozenset()  # members only: words of their archived topics


Key = tuple[int, int, int]  # (bot, group, user); user 0: the group itself


class KnownStakes:
    def __init__(
        self,
        memory: MemoryRepository,
        topics: SessionTopicRepository,
        clock: Clock,
        *,
        ttl_s: float = 600.0,
        max_entries: int = 4096,
    ) -> None:
        self._memory = memory
        self._topics = topics
        self._clock = clock
        self.ttl_s = ttl_s
        # FIFO by the last load: a read does not refresh an entry, a reload moves it to the end
        self._cache: FIFOCache[Key, _Words] = FIFOCache(max_entries)
        self._queue: deque[tuple[Key, tuple[str, ...]]] = deque()
        self._queued: set[Key] = set()
        self._task: asyncio.Task[None] | None = None

    def peek(
        self,
        bot_id: int,
        group_id: int,
        user_id: int,
        pools: Sequence[str] = (),
        *,
        exclude: Collection[str] = (),
    ) -> StakeKeys:
        """The words known now (empty until loaded); stale or missing entries are queued.
        `exclude`: the persona's own names, never a stake word (talk about the bot by name is
        the `alias` rule's business)."""
        group = self._fresh((bot_id, group_id, 0), tuple(pools))
        member = self._fresh((bot_id, group_id, user_id), tuple(pools))
        names = {n.lower() for n in exclude if n}

        def clean(words: frozenset[str]) -> frozenset[str]:
            if not names:
                return words
            return frozenset(w for w in words if not any(n in w or w in n for n in names))

        return StakeKeys(
            knowledge=clean(group.words) if group else frozenset(),
            remembered_topic=clean(member.topics) if member else frozenset(),
            member_memory=clean(member.words) if member else frozenset(),
        )

    def _fresh(self, key: Key, pools: tuple[str, ...]) -> _Words | None:
        entry = self._cache.get(key)
        if entry is None or not 0 <= self._clock.now() - entry.loaded_at < self.ttl_s:
            self._enqueue(key, pools)
        return entry

    def _enqueue(self, key: Key, pools: tuple[str, ...]) -> None:
        if key in self._queued:
            return
        self._queued.add(key)
        self._queue.append((key, pools))
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._drain())

    async def _drain(self) -> None:
        while self._queue:
            key, pools = self._queue.popleft()
            try:
                words = await self._load(key, pools)
            except Exception as exc:  # a store error: no stake words until the next try
                log.warning("stake words of %s not loaded: %s", key, exc)
                words = _Words(self._clock.now(), frozenset())
            finally:
                self._queued.discard(key)
            self._cache[key] = words
            await asyncio.sleep(0)  # ingest goes first

    async def _load(self, key: Key, pools: tuple[str, ...]) -> _Words:
        bot_id, group_id, user_id = key
        now = self._clock.now()
        if user_id == 0:
            scopes = readable_scopes(bot_id, group_id, pools)
            by_kind = await self._memory.candidates_by_kind(
                scopes, (KNOWLEDGE, GROUP_MEMORY), limit=GROUP_ITEMS
            )
            words: set[str] = set()
            for item in by_kind[KNOWLEDGE]:
                heading = heading_of(item.text)
                words |= _heading_words(heading) if heading else stake_words(item.text[:40])
            for item in by_kind[GROUP_MEMORY]:
                words |= stake_words(item.text)
            return _Words(now, frozenset(words))
        scopes = readable_scopes(bot_id, group_id, pools, user_id=user_id)
        facts = await self._memory.candidates(
            scopes, PERSON_FACTS, subject_user_id=user_id, limit=MEMBER_FACTS
        )
        topics = await self._topics.for_subject(bot_id, group_id, user_id, limit=MEMBER_TOPICS)
        return _Words(
            now,
            frozenset(w for f in facts for w in stake_words(f.text)),
            frozenset(w for t in topics for w in stake_words(t.text)),
        )

    async def close(self) -> None:
        self._queue.clear()
        if self._task is not None and not self._task.done():
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)


def _heading_words(heading: str) -> frozenset[str]:
    """A knowledge heading names its subject whole ("源石病"), and by its naming words."""
    whole = heading.lower()
    return stake_words(heading) | ({whole} if 2 <= len(whole) <= 12 else frozenset())
