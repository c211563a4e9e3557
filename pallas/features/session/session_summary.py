"""Long-session compression, run after a delivered reply, in the background.

When the user's session in this group reaches `session.threshold` rows and the cooldown has
passed since the last compression, everything outside the newest `keep_messages` rows (the
previous summary included) is compressed by the cheap model into one ≤`max_chars` Chinese
`【此前对话摘要】` user-role row. The new row is written and the superseded rows deleted in
one transaction; any failure before that leaves the history exactly as it was (and starts a
short back-off so a broken model is not asked again on every turn). At most one compression
per session is in flight (a `set_if_absent` claim in the StateStore), and each group has a
daily budget: summaries per day and cheap-model tokens per day (usage ledger).

Every summary is also archived as an old topic (`session_topic`) for 【相关旧话题】 recall.
The last compression time lives in the StateStore; after a restart it is read back from the
summary row (`extra.compressed_at`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from pallas.core import state_keys
from pallas.core.clock import CHINA, Clock
from pallas.core.db.repositories.chat_sessions import ChatSessionRepository
from pallas.core.db.repositories.usage import UsageRepository
from pallas.core.image_placeholders import has_placeholders
from pallas.core.records import SessionTurn
from pallas.core.state import StateStore, claim
from pallas.core.turn import CompletedTurn
from pallas.features.memory import own_scope
from pallas.features.session.image_descriptions import PlaceholderDescriber
from pallas.features.session.repository import SessionTopic, SessionTopicRepository
from pallas.features.session.summary_rules import (
    CompressionSplit,
    SessionSummaryConfig,
    build_summary_messages,
    clean_summary,
    format_summary_row,
    should_compress,
    split_for_compression,
    summary_created_at,
)
from pallas.providers.client import LLMClient
from pallas.providers.image_fetch import ImageFetchConfig

log = logging.getLogger("pallas.session")


class SummaryConfigView(Protocol):
    """What compression reads of a group's config (`GroupConfig` is one)."""

    @property
    def session(self) -> SessionSummaryConfig: ...

    @property
    def images(self) -> ImageFetchConfig: ...  # fetching history images to describe them


SUMMARY_TEMPERATURE = 0.3


def day_start(now: float) -> float:
    """Unix time of today's midnight in China (budgets reset there, like the usage ledger)."""
    local = datetime.fromtimestamp(now, CHINA)
    return local.replace(hour=0, minute=0, second=0, microsecond=0).timestamp()


@dataclass(frozen=True, slots=True)
class SummaryOutcome:
    status: str  # compressed | skipped | failed
    reason: str
    summary: str = ""
    deleted_rows: int = 0


def _skip(reason: str) -> SummaryOutcome:
    return SummaryOutcome("skipped", reason)


@dataclass(frozen=True, slots=True)
class _SessionKey:
    bot_id: int
    group_id: int
    user_id: int

    def state(self, suffix: str) -> str:
        return state_keys.session_summary(suffix, self.bot_id, self.group_id, self.user_id)


@dataclass
class SessionSummaryHook:
    """`AfterTurnHook`: compress the member's session once it is long enough."""

    chat_sessions: ChatSessionRepository
    topics: SessionTopicRepository
    usage: UsageRepository
    llm: LLMClient
    state: StateStore
    clock: Clock
    group_config: Callable[[int], SummaryConfigView]  # read when the hook runs
    describer: PlaceholderDescriber | None = None
    name: str = "session_summary"

    async def after_turn(self, completed: CompletedTurn) -> None:
        turn = completed.turn
        config = self.group_config(turn.group_id)
        outcome = await self.maybe_compress(turn.bot_id, turn.group_id, turn.user_id, config)
        if outcome.status == "failed":
            log.warning(
                "group %s user %s: session summary failed (%s); history kept",
                turn.group_id,
                turn.user_id,
                outcome.reason,
            )
        elif outcome.status == "compressed":
            log.info(
                "group %s user %s: session compressed (%d rows → summary of %d chars)",
                turn.group_id,
                turn.user_id,
                outcome.deleted_rows,
                len(outcome.summary),
            )

    async def maybe_compress(
        self, bot_id: int, group_id: int, user_id: int, config: SummaryConfigView
    ) -> SummaryOutcome:
        cfg = config.session
        if not cfg.enabled:
            return _skip("disabled")
        key = _SessionKey(bot_id, group_id, user_id)
        count = await self.chat_sessions.count_for_user(bot_id, group_id, user_id)
        if count < cfg.threshold:
            return _skip("below_threshold")
        now = self.clock.now()
        decision = should_compress(count, await self._last_compressed(key), now, cfg)
        if not decision.compress:
            return _skip(decision.reason)
        if await self.state.get(key.state("backoff")) is not None:
            return _skip("backoff")
        claimed = await claim(
            self.state,
            key.state("inflight"),
            now,
            ttl=cfg.in_flight_ttl_seconds,
            when_unavailable=False,  # an unverifiable claim waits for a later turn
        )
        if not claimed:
            return _skip("in_flight")
        try:
            outcome = await self._compress(key, config)
        except Exception:
            log.exception("group %s user %s: session summary crashed", group_id, user_id)
            outcome = SummaryOutcome("failed", "exception")
        finally:
            await self.state.delete(key.state("inflight"))
        if outcome.status == "failed" or outcome.reason.startswith("budget"):
            await self.state.set(
                key.state("backoff"), outcome.reason, ttl=max(cfg.failure_backoff_seconds, 1.0)
            )
        return outcome

    async def _last_compressed(self, key: _SessionKey) -> float | None:
        value = await self.state.get(key.state("last"))
        if isinstance(value, int | float):
            return float(value)
        summary = await self.chat_sessions.latest_summary(key.bot_id, key.group_id, key.user_id)
        stamp = summary.extra.get("compressed_at") if summary is not None else None
        return float(stamp) if isinstance(stamp, int | float) else None

    async def _budget_reason(self, key: _SessionKey, cfg: SessionSummaryConfig) -> str | None:
        now = self.clock.now()
        written = await self.topics.count_since(key.bot_id, key.group_id, day_start(now))
        if written >= cfg.daily_summary_limit:
            return "budget_summaries"
        cheap = await self.usage.totals(
            now=now, bot_id=key.bot_id, group_id=key.group_id, task="cheap"
        )
        if cheap.tokens >= cfg.daily_cheap_token_budget:
            return "budget_cheap_tokens"
        return None

    async def _compress(self, key: _SessionKey, config: SummaryConfigView) -> SummaryOutcome:
        cfg = config.session
        turns = await self.chat_sessions.all_for_user(key.bot_id, key.group_id, key.user_id)
        split = split_for_compression(turns, cfg.keep_messages)
        if not split.has_new_material:
            return _skip("nothing_new")
        budget = await self._budget_reason(key, cfg)
        if budget is not None:
            return _skip(budget)
        descriptions = await self._image_descriptions(key, split, config)
        result = await self.llm.complete(
            "cheap",
            build_summary_messages(
                split.to_summarise, max_chars=cfg.max_chars, image_descriptions=descriptions
            ),
            bot_id=key.bot_id,
            group_id=key.group_id,
            max_tokens=cfg.summary_max_tokens,
            temperature=SUMMARY_TEMPERATURE,
        )
        if not result.ok:
            return SummaryOutcome("failed", f"llm_{result.error}")
        summary = clean_summary(result.text, cfg.max_chars)
        if summary is None:
            return SummaryOutcome("failed", "unusable_summary")
        now = self.clock.now()
        row = self._summary_row(key, split, summary, now)
        await self.chat_sessions.replace_with_summary(row, split.row_ids_to_delete)
        await self.state.set(key.state("last"), now, ttl=cfg.cooldown_seconds + 60.0)
        await self._archive(key, split, summary, now)
        return SummaryOutcome("compressed", "ok", summary, len(split.row_ids_to_delete))

    async def _image_descriptions(
        self, key: _SessionKey, split: CompressionSplit, config: SummaryConfigView
    ) -> dict[str, str] | None:
        """None: placeholders collapse to `[图片]`; a mapping: described ones show their text."""
        cfg = config.session
        if not cfg.vision_describe_enabled or self.describer is None:
            return None
        if not any(has_placeholders(t.content) for t in split.to_summarise):
            return None
        try:
            return await self.describer.describe(
                split.to_summarise,
                bot_id=key.bot_id,
                group_id=key.group_id,
                limit=cfg.max_images_per_summary,
                daily_vision_calls=cfg.daily_vision_call_budget,
                images=config.images,
            )
        except Exception:
            log.exception("group %s: describing history images failed", key.group_id)
            return {}

    @staticmethod
    def _summary_row(
        key: _SessionKey, split: CompressionSplit, summary: str, now: float
    ) -> SessionTurn:
        regular = [t for t in split.to_summarise if not t.is_summary]
        return SessionTurn(
            bot_id=key.bot_id,
            group_id=key.group_id,
            user_id=key.user_id,
            role="user",
            content=format_summary_row(summary),
            created_at=summary_created_at(split.to_keep, now),
            is_summary=True,
            extra={
                "compressed_at": now,
                "summarised_rows": len(split.to_summarise),
                "span": [regular[0].created_at, regular[-1].created_at] if regular else [],
            },
        )

    async def _archive(
        self, key: _SessionKey, split: CompressionSplit, summary: str, now: float
    ) -> None:
        regular = [t for t in split.to_summarise if not t.is_summary]
        stamps = [t.created_at for t in regular] or [now]
        topic = SessionTopic(
            bot_id=key.bot_id,
            group_id=key.group_id,
            user_id=key.user_id,
            scope=own_scope(key.bot_id, key.group_id, key.user_id),
            text=summary,
            first_turn_at=min(stamps),
            last_turn_at=max(stamps),
            created_at=now,
            turn_count=len(regular),
        )
        try:
            await self.topics.add(topic)
        except Exception:
            log.exception("group %s: archiving the session summary as a topic failed", key.group_id)
