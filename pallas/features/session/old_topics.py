"""【相关旧话题】 (section `mid_term`): earlier session summaries recalled by topic.

Every session summary is archived in `session_topic` with its subject user and scope. On a
REPLY turn that may read persistent memory, the subject's own topics in *this* (bot, group)
are scored against the current message with the shared retrieval scoring (BM25 + recency +
frequency, similarity gate, block kind `old_topics`); the chosen ones are rendered as one
block and their access counts bumped. The summary that is still live in the session (pinned
as 【此前对话摘要】 in the messages) is not recalled a second time. The member's rows, their
candidates and index are kept between turns (`warm_topics`, `topic_index`), so a turn over
unchanged rows only scores them.

Isolation: rows are read by (bot, group, user) and then filtered again by scope, so a topic of
another group or another member can never appear.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from pallas.context import sections as S
from pallas.context.context import GatherRequest, SourceContribution
from pallas.context.processor_inputs import RetrievedBlock
from pallas.context.prompt_guard import sanitize_inline
from pallas.core.clock import DAY_S
from pallas.core.db.repositories.chat_sessions import ChatSessionRepository
from pallas.core.db.session_cache import SessionCache
from pallas.core.image_placeholders import strip_placeholders
from pallas.core.records import SessionTurn
from pallas.features.memory import RetrievalConfig, own_scope
from pallas.features.session.repository import SessionTopic, SessionTopicRepository
from pallas.features.session.summary_rules import SUMMARY_PREFIX, SessionSummaryConfig
from pallas.features.session.topic_cache import TopicCache
from pallas.features.session.topic_index import KIND as KIND
from pallas.features.session.topic_index import topic_candidates as topic_candidates
from pallas.features.session.topic_index import topic_id
from pallas.ranking import retrieve_prepared

HEADER_OLD_TOPICS = "相关旧话题"
TOPIC_LINE_MAX_CHARS = 300


def age_label(then: float, now: float) -> str:
    """How long ago a conversation was, in words the model reads naturally."""
    days = int(max(0.0, now - then) // DAY_S)
    if days == 0:
        return "今天早些时候"
    if days == 1:
        return "昨天"
    if days < 30:
        return f"{days}天前"
    if days < 365:
        return f"约{days // 30}个月前"
    return "一年多以前"


def render_old_topics(topics: Sequence[SessionTopic], now: float) -> str:
    """The block text: header, one usage note, one line per topic (sanitised, capped)."""
    lines = [
        f"【{HEADER_OLD_TOPICS}】",
        "- 以下是你和当前对话者更早聊过的内容摘要，仅供参考；对方没提起时不要主动翻旧账。",
    ]
    for topic in topics:
        text = sanitize_inline(strip_placeholders(topic.text), TOPIC_LINE_MAX_CHARS)
        if text:
            lines.append(f"- （{age_label(topic.last_turn_at, now)}）{text}")
    return "\n".join(lines) if len(lines) > 2 else ""


def _marker(live: SessionTurn | None) -> tuple[int, float, str] | None:
    """Which summary row is the member's latest (the kept topics' validity)."""
    return (live.row_id, live.created_at, live.content) if live else None


def _skipped(reason: str) -> SourceContribution:
    return SourceContribution(trace={"kind": KIND, "skipped": reason})


class OldTopicsConfigView(Protocol):
    """The group config as old topics read it (`GroupConfig` is one)."""

    @property
    def session(self) -> SessionSummaryConfig: ...

    @property
    def memory(self) -> RetrievalConfig: ...


@dataclass
class OldTopicsSource:
    """`ContextSource` for the mid_term section."""

    topics: SessionTopicRepository
    chat_sessions: ChatSessionRepository
    name: str = "old_topics"
    warm: TopicCache = field(default_factory=TopicCache)  # rows per member between turns

    def __post_init__(self) -> None:
        self.topics.added.append(self._archived)  # new topics update the kept rows in place

    async def _archived(self, topic: SessionTopic) -> None:
        """A summary archived `topic` (right after writing the member's new summary row)."""
        warm = SessionCache.of(self.chat_sessions)
        live = await warm.latest_summary(topic.bot_id, topic.group_id, topic.user_id)
        self.warm.added(topic, _marker(live))

    async def prewarm(self, bot_id: int, group_id: int, config: object, now: float) -> None:
        """Who has topics in the group (`GroupPreload`)."""
        await self.warm.prewarm(self.topics, bot_id, group_id, now)

    async def gather(self, request: GatherRequest[OldTopicsConfigView]) -> SourceContribution:
        if not request.allow_persistent_memory:
            return _skipped("skipped_short_social_turn")
        query = strip_placeholders(request.current_text).strip()
        if not query:
            return _skipped("empty_query")
        turn = request.turn
        config = request.config
        warm = SessionCache.of(self.chat_sessions)  # the reply path's warm session windows
        live = await warm.latest_summary(turn.bot_id, turn.group_id, turn.user_id)
        live_text = live.content.removeprefix(SUMMARY_PREFIX).strip() if live else ""
        key = (turn.bot_id, turn.group_id, turn.user_id, config.session.topic_candidates)
        marker = _marker(live)
        rows = await self.warm.for_subject(self.topics, key, marker=marker, now=request.now)
        if not rows:
            return _skipped("no_topics")
        prepared = self.warm.prepared(  # candidates + index kept while the rows are unchanged
            key,
            rows,
            exclude_text=live_text,
            allowed={own_scope(turn.bot_id, turn.group_id, turn.user_id)},
            bm25=(config.memory.bm25_k1, config.memory.bm25_b),
        )
        result = retrieve_prepared(
            query, prepared.candidates, kind=KIND, now=request.now, config=config.memory
        )
        trace = result.trace.to_dict()
        chosen = [prepared.by_id[c.id] for c in result.chosen]
        text = render_old_topics(chosen, request.now)
        if not text:
            return SourceContribution(trace=trace)
        self.topics.touch_later((t.row_id for t in chosen), request.now)  # off the reply path
        self.warm.touched(key, {t.row_id for t in chosen}, request.now)
        block = RetrievedBlock(
            text=text,
            source="session_topic",
            memory_ids=tuple(topic_id(t.row_id) for t in chosen),
            source_tokens=tuple(topic_id(t.row_id) for t in chosen),
            headers=(HEADER_OLD_TOPICS,),
        )
        return SourceContribution(blocks={S.MID_TERM: block}, trace=trace)
