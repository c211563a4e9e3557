"""`session_topic` (archived session summaries) and `image_description` (vision cache)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, replace

from sqlalchemy import func, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from pallas.core.db.engine import dialect_name
from pallas.core.db.models_session import ImageDescriptionRow, SessionTopicRow
from pallas.core.db.write_behind import WriteBehind

log = logging.getLogger("pallas.session")

MAX_TOPIC_CHARS = 2_000


@dataclass(frozen=True, slots=True)
class SessionTopic:
    bot_id: int
    group_id: int
    user_id: int
    scope: str
    text: str
    first_turn_at: float
    last_turn_at: float
    created_at: float
    turn_count: int = 0
    last_access_at: float | None = None
    access_count: int = 0
    row_id: int = 0


def _to_topic(row: SessionTopicRow) -> SessionTopic:
    return SessionTopic(
        bot_id=row.bot_id,
        group_id=row.group_id,
        user_id=row.user_id,
        scope=row.scope,
        text=row.text,
        first_turn_at=row.first_turn_at,
        last_turn_at=row.last_turn_at,
        created_at=row.created_at,
        turn_count=row.turn_count,
        last_access_at=row.last_access_at,
        access_count=row.access_count,
        row_id=row.id,
    )


class SessionTopicRepository:
    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self._sessions = sessions
        # Called with each stored topic as `for_subject` would return it (the warm topics of
        # the old-topics source follow new topics without reading them back).
        self.added: list[Callable[[SessionTopic], Awaitable[None]]] = []
        # recalls (access count + 1) are stored in batches off the reply path; reads flush
        self._touches: WriteBehind[tuple[tuple[int, ...], float]] = WriteBehind(
            self._touch_many, name="topic recalls"
        )

    async def add(self, topic: SessionTopic) -> int:
        row_id = await self._insert(topic)
        stored = replace(topic, text=topic.text[:MAX_TOPIC_CHARS], row_id=row_id)
        for listener in self.added:
            try:
                await listener(stored)
            except Exception:
                log.exception("session topic %s: a listener failed", row_id)
        return row_id

    async def _insert(self, topic: SessionTopic) -> int:
        row = SessionTopicRow(
            bot_id=topic.bot_id,
            group_id=topic.group_id,
            user_id=topic.user_id,
            scope=topic.scope,
            text=topic.text[:MAX_TOPIC_CHARS],
            first_turn_at=topic.first_turn_at,
            last_turn_at=topic.last_turn_at,
            turn_count=topic.turn_count,
            created_at=topic.created_at,
            last_access_at=topic.last_access_at,
            access_count=topic.access_count,
        )
        async with self._sessions() as session:
            session.add(row)
            await session.commit()
            return int(row.id)

    async def for_subject(
        self, bot_id: int, group_id: int, user_id: int, *, limit: int
    ) -> list[SessionTopic]:
        """The user's newest `limit` topics in this group (or private chat), newest first."""
        await self.flush()  # their access counts include the queued recalls
        stmt = (
            select(SessionTopicRow)
            .where(
                SessionTopicRow.bot_id == bot_id,
                SessionTopicRow.group_id == group_id,
                SessionTopicRow.user_id == user_id,
            )
            .order_by(SessionTopicRow.id.desc())
            .limit(limit)
        )
        async with self._sessions() as session:
            rows = (await session.scalars(stmt)).all()
        return [_to_topic(r) for r in rows]

    async def user_ids(self, bot_id: int, group_id: int) -> set[int]:
        """The members with any topic in this group (or private chat)."""
        stmt = (
            select(SessionTopicRow.user_id)
            .where(SessionTopicRow.bot_id == bot_id, SessionTopicRow.group_id == group_id)
            .distinct()
        )
        async with self._sessions() as session:
            return {int(u) for u in (await session.scalars(stmt)).all()}

    async def count_since(self, bot_id: int, group_id: int, since: float) -> int:
        """Topics (= summaries written) in this group since `since` (for the daily budget)."""
        stmt = (
            select(func.count())
            .select_from(SessionTopicRow)
            .where(
                SessionTopicRow.bot_id == bot_id,
                SessionTopicRow.group_id == group_id,
                SessionTopicRow.created_at >= since,
            )
        )
        async with self._sessions() as session:
            return int((await session.execute(stmt)).scalar_one())

    async def touch(self, row_ids: Iterable[int], now: float) -> None:
        """Record a recall now: bump the access count and the last-access time."""
        ids = tuple(int(i) for i in row_ids)
        if ids:
            await self.flush()
            await self._touch_many([(ids, now)])

    def touch_later(self, row_ids: Iterable[int], now: float) -> None:
        """Queue a recall (stored in a batch shortly after; `for_subject` and `flush` wait)."""
        ids = tuple(int(i) for i in row_ids)
        if ids:
            self._touches.add((ids, now))

    async def flush(self) -> None:
        await self._touches.flush()

    async def _touch_many(self, recalls: list[tuple[tuple[int, ...], float]]) -> None:
        async with self._sessions() as session:
            for ids, now in recalls:  # in order: the last recall's time wins
                stmt = (
                    update(SessionTopicRow)
                    .where(SessionTopicRow.id.in_(ids))
                    .values(access_count=SessionTopicRow.access_count + 1, last_access_at=now)
                )
                await session.execute(stmt)
            await session.commit()


class ImageDescriptionRepository:
    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self._sessions = sessions

    async def get_many(self, digests: Iterable[str]) -> dict[str, str]:
        keys = sorted({d for d in digests if d})
        if not keys:
            return {}
        stmt = select(ImageDescriptionRow).where(ImageDescriptionRow.sha256.in_(keys))
        async with self._sessions() as session:
            rows = (await session.scalars(stmt)).all()
        return {r.sha256: r.description for r in rows}

    async def put_many(self, descriptions: Mapping[str, str], *, model: str, now: float) -> None:
        """Insert new descriptions; an image described meanwhile keeps its first description."""
        values = [
            {"sha256": sha, "description": text, "model": model[:128], "created_at": now}
            for sha, text in descriptions.items()
            if sha and text
        ]
        if not values:
            return
        async with self._sessions() as session:
            insert = postgresql.insert if dialect_name(session) == "postgresql" else sqlite.insert
            stmt = insert(ImageDescriptionRow).values(values)
            await session.execute(stmt.on_conflict_do_nothing(index_elements=["sha256"]))
            await session.commit()
