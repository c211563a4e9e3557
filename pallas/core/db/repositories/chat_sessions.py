"""The `llm_chat_message` table: per-user chat session turns (and summary rows)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Protocol

from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from pallas.core.db.engine import rowcount
from pallas.core.db.models import LlmChatMessageRow
from pallas.core.db.write_behind import WriteBehind
from pallas.core.records import SessionTurn


def _to_turn(row: LlmChatMessageRow) -> SessionTurn:
    return SessionTurn(
        bot_id=row.bot_id,
        group_id=row.group_id,
        user_id=row.user_id,
        role=row.role,
        content=row.content,
        created_at=row.created_at,
        is_summary=row.is_summary,
        row_id=row.id,
        extra=dict(row.extra or {}),
    )


def _of_group(bot_id: int, group_id: int) -> Callable[[SessionTurn], bool]:
    return lambda t: t.bot_id == bot_id and t.group_id == group_id


def _of_member(bot_id: int, group_id: int, user_id: int) -> Callable[[SessionTurn], bool]:
    return lambda t: (t.bot_id, t.group_id, t.user_id) == (bot_id, group_id, user_id)


class SessionListener(Protocol):
    """Told about every change made through this repository (warm caches follow it)."""

    def appended(self, turns: Sequence[SessionTurn]) -> None: ...

    def cleared(self, bot_id: int, group_id: int | None, user_id: int) -> None: ...

    def summarised(self, summary: SessionTurn, deleted_row_ids: Sequence[int]) -> None: ...


class ChatSessionRepository:
    def __init__(self, sessions: async_sessionmaker[AsyncSession], *, linger: float = 0.05) -> None:
        self._sessions = sessions
        self._behind: WriteBehind[SessionTurn] = WriteBehind(
            self._store, name="sessions", linger=linger
        )
        self._listeners: tuple[SessionListener, ...] = ()

    @property
    def listeners(self) -> tuple[SessionListener, ...]:
        return self._listeners

    def subscribe(self, listener: SessionListener) -> None:
        """Called from a follower's constructor (`SessionCache`): told of every change made
        through this repository from now on."""
        self._listeners = (*self._listeners, listener)

    async def append(self, turns: Iterable[SessionTurn]) -> None:
        turns = list(turns)
        await self.flush()
        await self._store(turns)

    def append_later(self, turns: Sequence[SessionTurn]) -> None:
        """Queue the turns (one batched transaction shortly after; a read here first stores
        the queued turns it would read, so readers of this repository never miss them)."""
        for turn in turns:
            self._behind.add(turn)

    def has_pending(self, bot_id: int, group_id: int) -> bool:
        """Whether turns of this group are queued and not yet stored."""
        return any(map(_of_group(bot_id, group_id), self._behind.pending))

    async def flush(self) -> None:
        await self._behind.flush()

    async def flush_group(self, bot_id: int, group_id: int) -> None:
        """Store the queue first if it holds turns of this group (else return at once)."""
        await self._behind.flush_matching(_of_group(bot_id, group_id))

    async def _flush_member(self, bot_id: int, group_id: int, user_id: int) -> None:
        await self._behind.flush_matching(_of_member(bot_id, group_id, user_id))

    def _appended(self, turns: Sequence[SessionTurn]) -> None:
        if turns:
            for listener in self._listeners:
                listener.appended(turns)

    def _cleared(self, bot_id: int, group_id: int | None, user_id: int) -> None:
        for listener in self._listeners:
            listener.cleared(bot_id, group_id, user_id)

    async def _store(self, turns: Sequence[SessionTurn]) -> None:
        rows = [
            LlmChatMessageRow(
                bot_id=t.bot_id,
                group_id=t.group_id,
                user_id=t.user_id,
                role=t.role,
                content=t.content,
                is_summary=t.is_summary,
                extra=dict(t.extra),
                created_at=t.created_at,
            )
            for t in turns
        ]
        if not rows:
            return
        async with self._sessions() as session:
            session.add_all(rows)
            await session.flush()
            stored = [_to_turn(row) for row in rows]  # with their row ids
            await session.commit()
        self._appended(stored)

    async def recent_for_user(
        self, bot_id: int, group_id: int, user_id: int, *, limit: int
    ) -> list[SessionTurn]:
        """The user's newest `limit` turns in this group (or private chat), oldest first."""
        stmt = (
            select(LlmChatMessageRow)
            .where(
                LlmChatMessageRow.bot_id == bot_id,
                LlmChatMessageRow.group_id == group_id,
                LlmChatMessageRow.user_id == user_id,
            )
            .order_by(LlmChatMessageRow.id.desc())
            .limit(limit)
        )
        await self._flush_member(bot_id, group_id, user_id)
        async with self._sessions() as session:
            rows = (await session.scalars(stmt)).all()
        return [_to_turn(r) for r in reversed(rows)]

    async def latest_summary(self, bot_id: int, group_id: int, user_id: int) -> SessionTurn | None:
        stmt = (
            select(LlmChatMessageRow)
            .where(
                LlmChatMessageRow.bot_id == bot_id,
                LlmChatMessageRow.group_id == group_id,
                LlmChatMessageRow.user_id == user_id,
                LlmChatMessageRow.is_summary.is_(True),
            )
            .order_by(LlmChatMessageRow.id.desc())
            .limit(1)
        )
        await self._flush_member(bot_id, group_id, user_id)
        async with self._sessions() as session:
            row = (await session.scalars(stmt)).first()
        return _to_turn(row) if row else None

    async def recent_for_group(
        self, bot_id: int, group_id: int, *, limit: int, exclude_user_id: int | None = None
    ) -> list[SessionTurn]:
        """The group's newest non-summary turns (any user), oldest first."""
        stmt = select(LlmChatMessageRow).where(
            LlmChatMessageRow.bot_id == bot_id,
            LlmChatMessageRow.group_id == group_id,
            LlmChatMessageRow.is_summary.is_(False),
        )
        if exclude_user_id is not None:
            stmt = stmt.where(LlmChatMessageRow.user_id != exclude_user_id)
        stmt = stmt.order_by(LlmChatMessageRow.id.desc()).limit(limit)
        await self.flush_group(bot_id, group_id)
        async with self._sessions() as session:
            rows = (await session.scalars(stmt)).all()
        return [_to_turn(r) for r in reversed(rows)]

    async def user_ids(self, bot_id: int, group_id: int) -> set[int]:
        """The members with any session row in this group (summaries included)."""
        stmt = (
            select(LlmChatMessageRow.user_id)
            .where(LlmChatMessageRow.bot_id == bot_id, LlmChatMessageRow.group_id == group_id)
            .distinct()
        )
        await self.flush_group(bot_id, group_id)
        async with self._sessions() as session:
            return {int(u) for u in (await session.scalars(stmt)).all()}

    async def count_for_user(self, bot_id: int, group_id: int, user_id: int) -> int:
        stmt = (
            select(func.count())
            .select_from(LlmChatMessageRow)
            .where(
                LlmChatMessageRow.bot_id == bot_id,
                LlmChatMessageRow.group_id == group_id,
                LlmChatMessageRow.user_id == user_id,
            )
        )
        # stored rows + queued ones, without forcing the queue out (the summary hook asks
        # after every reply; a flush here would store each turn alone, defeating the batching)
        async with self._behind.settled() as queued:
            pending = sum(map(_of_member(bot_id, group_id, user_id), queued))
            async with self._sessions() as session:
                return pending + int((await session.execute(stmt)).scalar_one())

    async def all_for_user(self, bot_id: int, group_id: int, user_id: int) -> list[SessionTurn]:
        stmt = (
            select(LlmChatMessageRow)
            .where(
                LlmChatMessageRow.bot_id == bot_id,
                LlmChatMessageRow.group_id == group_id,
                LlmChatMessageRow.user_id == user_id,
            )
            .order_by(LlmChatMessageRow.id)
        )
        await self._flush_member(bot_id, group_id, user_id)
        async with self._sessions() as session:
            rows = (await session.scalars(stmt)).all()
        return [_to_turn(r) for r in rows]

    async def replace_with_summary(
        self, summary: SessionTurn, superseded_row_ids: Sequence[int]
    ) -> None:
        """Write the summary row and delete the rows it replaces in one transaction."""
        await self.flush()
        async with self._sessions() as session, session.begin():
            row = LlmChatMessageRow(
                bot_id=summary.bot_id,
                group_id=summary.group_id,
                user_id=summary.user_id,
                role=summary.role,
                content=summary.content,
                is_summary=True,
                extra=dict(summary.extra),
                created_at=summary.created_at,
            )
            session.add(row)
            await session.flush()
            stored = _to_turn(row)
            if superseded_row_ids:
                await session.execute(
                    delete(LlmChatMessageRow).where(
                        LlmChatMessageRow.id.in_(list(superseded_row_ids))
                    )
                )
        for listener in self._listeners:
            listener.summarised(stored, superseded_row_ids)

    async def delete_for_user(self, bot_id: int, group_id: int | None, user_id: int) -> int:
        stmt = delete(LlmChatMessageRow).where(
            LlmChatMessageRow.bot_id == bot_id, LlmChatMessageRow.user_id == user_id
        )
        if group_id is not None:
            stmt = stmt.where(LlmChatMessageRow.group_id == group_id)
        await self.flush()
        async with self._sessions() as session:
            result = await session.execute(stmt)
            await session.commit()
        self._cleared(bot_id, group_id, user_id)
        return max(rowcount(result), 0)
