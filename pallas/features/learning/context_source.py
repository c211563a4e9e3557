"""The group-learning `ContextSource`: sections 4, 5 and 12 of the system prompt.

Per REPLY turn, for this bot × group only:
- `group_expression` — 【群表达指导】: up to 2 observed human pairs recalled for the current text
  plus the group's rhythm baseline (self-reflection pairs never feed it);
- `behavior_reference` — 【真人接话参考】 (observed strategies, only when no direct pair matched)
  and 【接话复盘】 (self-reflection strategies), ≤ 3 each, joined into one block;
- `reply_shape` — the shape contract from the group's reply profile, once it has enough turns
  (before that the orchestrator's defaults stay in force);
- `feedback_blocklist` — phrases an admin rejected, filtered out of the ambient excerpt.
Every injected pair / strategy carries its source token (`pair:…` → kind expression,
`strategy:…` → kind semantic) so negative feedback can blame it. Nothing is injected when the
group's `learning.inject_enabled` is off (the feedback blocklist still applies).

Casual or not (which shape bounds apply): casual when the turn is a short social turn, when the
text is a social move (greeting, thanks, teasing, venting …), or when it is short chit-chat:
at most `CHITCHAT_MAX_CHARS` content chars and neither a question nor a request (routing's own
text signals). Questions, requests and longer statements get the non-casual bounds.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Protocol

from cachetools import FIFOCache
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from pallas.context import sections as S
from pallas.context.context import GatherRequest, SourceContribution
from pallas.context.processor_inputs import RetrievedBlock
from pallas.core.state import StateStore
from pallas.features.learning.feedback_repository import FeedbackRepository
from pallas.features.learning.repository import LearningRepository
from pallas.routing.ambient_stake import ObservedPhrase, observed_mood
from pallas.routing.text_signals import (
    SocialAction,
    classify_social_action,
    is_question,
    is_request,
    meaningful_length,
)

from .config import LearningConfig
from .expression_pool import ExpressionPool
from .group_store import FeedbackBlocks, GroupLearningCache, GroupLearningData, feedback_blocks
from .reply_shape import decide_reply_shape, is_profile_trusted
from .semantic_style import render_group_expression_block, resolve_group_expression
from .strategies import (
    render_behavior_reference_block,
    render_self_reflection_block,
    select_strategies,
)
from .text import blocked_keys_of, phrase_blocked

CHITCHAT_MAX_CHARS = 20
MAX_CACHED_POOLS = 256
LOW_ENGAGEMENT_MAX_CHARS = 12
LOW_ENGAGEMENT_MIN_USES = 2  # an "active" expression: members used it at least twice
LOW_ENGAGEMENT_POOL_SIZE = 20
EXPRESSION_HEADERS = ("群表达指导",)
BEHAVIOR_HEADERS = ("真人接话参考", "接话复盘")


def is_casual_text(text: str, *, short_social: bool) -> bool:
    """Casual shape bounds for this turn? (rule in the module docstring)"""
    if short_social:
        return True
    if classify_social_action(text) is not SocialAction.NONE:
        return True
    if is_question(text) or is_request(text):
        return False
    return meaningful_length(text) <= CHITCHAT_MAX_CHARS


def learning_contribution(
    data: GroupLearningData,
    *,
    text: str,
    config: LearningConfig,
    short_social: bool,
    blocks: FeedbackBlocks,
    pool: ExpressionPool | None = None,
) -> SourceContribution:
    """Blocks, shape and blocklist of one turn from already-loaded group data (pure).

    `pool` is `ExpressionPool.build(data, blocks)`, cached by the caller; built here if absent.
    """
    options = config.expression_options()
    pool = pool or ExpressionPool.build(data, blocks)
    candidates = pool.candidates(text, min_similarity=options.min_similarity)
    resolved = resolve_group_expression(
        text,
        candidates,
        bot_id=data.bot_id,
        group_id=data.group_id,
        profile=data.profile,
        options=options,
    )
    selection = select_strategies(
        data.strategies,
        bot_id=data.bot_id,
        group_id=data.group_id,
        has_direct_pairs=resolved.has_direct_pairs,
        max_observed=config.strategy_max_observed,
        max_reflection=config.strategy_max_reflection,
        min_support=config.strategy_min_support,
        blocked_phrases=blocks.phrases,
        blocked_tokens=blocks.tokens,
    )
    out: dict[str, RetrievedBlock] = {}
    expression = render_group_expression_block(resolved, options)
    if expression:
        out[S.GROUP_EXPRESSION] = RetrievedBlock(
            expression,
            source="group_learning.expression",
            source_tokens=resolved.source_tokens,
            headers=EXPRESSION_HEADERS,
        )
    behavior = "\n\n".join(
        part
        for part in (
            render_behavior_reference_block(selection.observed),
            render_self_reflection_block(selection.reflection),
        )
        if part
    )
    if behavior:
        out[S.BEHAVIOR_REFERENCE] = RetrievedBlock(
            behavior,
            source="group_learning.strategies",
            source_tokens=selection.source_tokens,
            headers=BEHAVIOR_HEADERS,
        )
    shape_options = config.shape_options()
    casual = is_casual_text(text, short_social=short_social)
    shape = None
    if is_profile_trusted(data.profile, shape_options):
        shape = decide_reply_shape(data.profile, casual=casual, options=shape_options)
    trace: dict[str, Any] = {
        "expression": resolved.reason,
        "expression_filtered": dict(pool.filtered),
        "expression_candidates": len(candidates),
        "strategies": selection.reason,
        "shape": shape.reason if shape is not None else "defaults: profile not trusted yet",
        # the same in numbers, for the console's Chinese line (`web.retrieval_view`)
        "expression_matched": len(resolved.matched_examples),
        "observed": len(selection.observed),
        "reflection": len(selection.reflection),
        "shape_turns": data.profile.sample_turns if data.profile is not None else 0,
        "shape_segments": shape.recommended_segments if shape is not None else None,
        "shape_chars": [shape.min_chars, shape.max_chars] if shape is not None else None,
        "casual": casual,
        "pool": len(pool.pairs),
        "blocked_phrases": len(blocks.phrases),
        "blocked_tokens": len(blocks.tokens),
    }
    return SourceContribution(
        blocks=out, trace=trace, reply_shape=shape, feedback_blocklist=blocks.phrases
    )


class LearningConfigView(Protocol):
    """The group config as this slice reads it (`GroupConfig` is one; the config layer is
    above the features, so the slice names the one field it reads)."""

    @property
    def learning(self) -> LearningConfig: ...


class GroupLearningSource:
    """`ContextSource` over the stored learning of the turn's own bot × group."""

    name = "group_learning"

    def __init__(self, sessions: async_sessionmaker[AsyncSession], state: StateStore) -> None:
        self._cache = GroupLearningCache(
            LearningRepository(sessions), FeedbackRepository(sessions), state
        )
        # one filtered pool per group, rebuilt when its data or its feedback blocks change; the
        # group rebuilt longest ago goes first (FIFOCache: a key set again moves to the end)
        self._pools: FIFOCache[tuple[int, int], tuple[object, ExpressionPool]] = FIFOCache(
            MAX_CACHED_POOLS
        )
        self._phrases: FIFOCache[tuple[int, int], tuple[object, tuple[str, ...]]] = FIFOCache(
            MAX_CACHED_POOLS
        )

    def _pool(self, data: GroupLearningData, blocks: FeedbackBlocks) -> ExpressionPool:
        key = (data.bot_id, data.group_id)
        stamp = (data.generation, data.loaded_at, blocks)
        cached = self._pools.get(key)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        pool = ExpressionPool.build(data, blocks)
        self._pools[key] = (stamp, pool)
        return pool

    async def low_engagement_phrases(
        self, bot_id: int, group_id: int, *, now: float, config: LearningConfigView
    ) -> tuple[str, ...]:
        """The group's own short, repeatedly used replies for the PASS phrase pool, minus
        anything that drew negative feedback. Cached per data generation and feedback state."""
        if group_id == 0:
            return ()
        learning = config.learning
        if not learning.inject_enabled:
            return ()
        data = await self._cache.get(
            bot_id,
            group_id,
            now=now,
            pool_size=learning.expression_pool_size,
            ttl=learning.cache_ttl_seconds,
            collector=learning.collector_bot_id,
        )
        blocks = feedback_blocks(
            data.feedback,
            now=now,
            threshold=learning.feedback_block_threshold,
            half_life_days=learning.feedback_half_life_days,
            min_phrase_chars=learning.feedback_min_phrase_chars,
        )
        key = (bot_id, group_id)
        stamp = (data.generation, data.loaded_at, blocks)
        cached = self._phrases.get(key)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        phrases = _active_short_phrases(data, blocks)
        self._phrases[key] = (stamp, phrases)
        return phrases

    async def prewarm(
        self, bot_id: int, group_id: int, config: LearningConfigView, now: float
    ) -> None:
        """The group's learning data, as the next turn reads it (`GroupPreload`)."""
        learning = config.learning
        await self._cache.get(
            bot_id,
            group_id,
            now=now,
            pool_size=learning.expression_pool_size,
            ttl=learning.cache_ttl_seconds,
            collector=learning.collector_bot_id,
        )

    async def gather(self, request: GatherRequest[LearningConfigView]) -> SourceContribution:
        turn = request.turn
        if turn.group_id == 0:
            return SourceContribution(trace={"skipped": "private_chat"})
        config = request.config.learning
        data = await self._cache.get(
            turn.bot_id,
            turn.group_id,
            now=request.now,
            pool_size=config.expression_pool_size,
            ttl=config.cache_ttl_seconds,
            collector=config.collector_bot_id,
        )
        blocks = feedback_blocks(
            data.feedback,
            now=request.now,
            threshold=config.feedback_block_threshold,
            half_life_days=config.feedback_half_life_days,
            min_phrase_chars=config.feedback_min_phrase_chars,
        )
        if not config.inject_enabled:
            return SourceContribution(
                trace={"skipped": "inject_disabled", "blocked_phrases": len(blocks.phrases)},
                feedback_blocklist=blocks.phrases,
            )
        return learning_contribution(
            data,
            text=request.current_text,
            config=config,
            short_social=request.short_social,
            blocks=blocks,
            pool=self._pool(data, blocks),
        )


def _active_short_phrases(data: GroupLearningData, blocks: FeedbackBlocks) -> tuple[str, ...]:
    """The repeated short replies, each with the mood of the messages it answered (the PASS exit
    uses a phrase only in that mood)."""
    blocked = blocked_keys_of(blocks.phrases)
    triggers: dict[str, list[str]] = {}
    for pair in data.observed_pairs:
        if pair.source_token not in blocks.tokens:
            triggers.setdefault(pair.response_text.strip(), []).append(pair.trigger_text)
    counts = Counter({text: len(seen) for text, seen in triggers.items()})
    return tuple(
        ObservedPhrase(text, observed_mood(triggers[text]))
        for text, uses in counts.most_common()
        if uses >= LOW_ENGAGEMENT_MIN_USES
        and 2 <= len(text) <= LOW_ENGAGEMENT_MAX_CHARS
        and not phrase_blocked(text, blocked)
    )[:LOW_ENGAGEMENT_POOL_SIZE]
