"""What the reply path knows about one bot × group's learning, cached between turns.

`GroupLearningCache.get` returns a frozen `GroupLearningData` (observed pairs, labels,
strategies, reply profile, feedback outcomes) for one bot × group. It is reloaded from the
database when the group's generation counter in the `StateStore` moved (a sweep or a feedback
record/undo bumps it via `bump_generation`) or after `ttl` seconds, so a reply turn usually
costs one state read and no query.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from cachetools import FIFOCache

from pallas.core import state_keys
from pallas.core.clock import DAY_S
from pallas.core.learning_records import (
    BehaviorStrategy,
    FeedbackOutcome,
    GroupReplyProfile,
    LearningType,
    PairLabel,
    ReplyPair,
)
from pallas.core.single_flight import SingleFlight
from pallas.core.state import StateStore
from pallas.core.text import match_key
from pallas.features.learning.feedback_repository import FeedbackRepository
from pallas.features.learning.repository import LearningRepository

from .collector import choose_collector
from .injection_feedback import blocked_phrases, blocked_tokens

log = logging.getLogger("pallas.learning")

_FEEDBACK_LOOKBACK_DAYS = 365.0


def generation_key(group_id: int) -> str:
    return state_keys.learning_generation(group_id)


async def bump_generation(state: StateStore, group_id: int) -> int:
    """Tell every reply-path cache (of every account in the group) that this group's learning
    data changed."""
    return await state.incr(generation_key(group_id))


@dataclass(frozen=True, slots=True)
class GroupLearningData:
    bot_id: int
    group_id: int
    observed_pairs: tuple[ReplyPair, ...] = ()
    labels: Mapping[tuple[int, int], PairLabel] = field(default_factory=dict)
    strategies: tuple[BehaviorStrategy, ...] = ()
    profile: GroupReplyProfile | None = None
    feedback: tuple[FeedbackOutcome, ...] = ()
    generation: int = 0
    loaded_at: float = 0.0


@dataclass(frozen=True, slots=True)
class FeedbackBlocks:
    phrases: tuple[str, ...]  # → feedback_blocklist (ambient excerpt) and expression pools
    tokens: frozenset[str]  # blamed source ids (pairs, strategies, …)


def feedback_blocks(
    outcomes: tuple[FeedbackOutcome, ...],
    *,
    now: float,
    threshold: float,
    half_life_days: float,
    min_phrase_chars: int,
) -> FeedbackBlocks:
    """Phrases and tokens still blocked at `now`; phrases shorter than `min_phrase_chars`
    content chars are dropped (a rejected 「好」 must not silence every line containing 好)."""
    phrases = blocked_phrases(outcomes, now=now, threshold=threshold, half_life_days=half_life_days)
    kept = sorted(p for p in phrases if len(match_key(p)) >= min_phrase_chars)
    tokens = blocked_tokens(outcomes, now=now, threshold=threshold, half_life_days=half_life_days)
    return FeedbackBlocks(tuple(kept), tokens)


class GroupLearningCache:
    def __init__(
        self,
        learning: LearningRepository,
        feedback: FeedbackRepository,
        state: StateStore,
        *,
        max_groups: int = 256,
    ) -> None:
        self._learning = learning
        self._feedback = feedback
        self._state = state
        # the group used least recently goes first; a stale entry read is not a use
        # (FIFOCache: a key set again moves to the end)
        self._entries: FIFOCache[tuple[int, int], GroupLearningData] = FIFOCache(max_groups)
        # one load per group and generation at a time: a burst of messages in a cold group
        # shares it
        self._loads: SingleFlight[tuple[int, int, int], GroupLearningData] = SingleFlight()

    async def get(
        self,
        bot_id: int,
        group_id: int,
        *,
        now: float,
        pool_size: int,
        ttl: float,
        collector: int | None = None,
    ) -> GroupLearningData:
        """The group's learning as account `bot_id` uses it: what the group's collector
        learned (`collector.choose_collector`; `collector`: the configured one) and the
        feedback on this account's own lines."""
        key = (bot_id, group_id)
        generation = int(await self._state.get(generation_key(group_id)) or 0)
        cached = self._entries.get(key)
        if cached is not None and cached.generation == generation and now - cached.loaded_at < ttl:
            self._entries[key] = cached
            return cached
        return await self._loads.run(
            (bot_id, group_id, generation),
            lambda: self._fill(key, generation, now, pool_size, collector),
        )

    async def _fill(
        self,
        key: tuple[int, int],
        generation: int,
        now: float,
        pool_size: int,
        collector: int | None,
    ) -> GroupLearningData:
        owner = await self._owner(key[0], key[1], collector)
        data = await self._load(key[0], key[1], owner, now=now, pool_size=pool_size)
        data = replace(data, generation=generation, loaded_at=now)
        self._entries[key] = data
        return data

    def invalidate(self, bot_id: int, group_id: int) -> None:
        self._entries.pop((bot_id, group_id), None)

    async def _owner(self, bot_id: int, group_id: int, configured: int | None) -> int:
        """The account whose learning of the group is read (this one until any collected)."""
        if configured:
            return configured
        collecting = await self._learning.collecting_accounts(group_id)
        return choose_collector(None, collecting=collecting).bot_id or bot_id

    async def _load(
        self, bot_id: int, group_id: int, owner: int, *, now: float, pool_size: int
    ) -> GroupLearningData:
        since = now - _FEEDBACK_LOOKBACK_DAYS * DAY_S
        # five independent reads: side by side (their waits overlap on a cold first turn)
        pairs, labels, strategies, stored_profile, feedback = await asyncio.gather(
            self._learning.pairs(
                owner, group_id, learning_type=LearningType.OBSERVED, limit=pool_size
            ),
            self._learning.labels(owner, group_id, limit=max(pool_size * 2, 100)),
            self._learning.strategies(owner, group_id),
            self._learning.profile(owner, group_id),
            self._feedback.for_group(bot_id, group_id, since=since),  # on this account's lines
        )
        return GroupLearningData(
            bot_id=owner,  # whose learning this is (the pairs' and strategies' bot)
            group_id=group_id,
            observed_pairs=tuple(pairs),
            labels={label.key: label for label in labels},
            strategies=tuple(strategies),
            profile=stored_profile.profile if stored_profile else None,
            feedback=tuple(f.outcome for f in feedback if f.outcome.active),
        )
