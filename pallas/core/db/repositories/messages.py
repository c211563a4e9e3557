"""The `message` table: every group message seen or sent."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import case, func, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from pallas.core.db.engine import dialect_name, rowcount
from pallas.core.db.ingest_events import IngestEvents
from pallas.core.db.models import MessageRow
from pallas.core.records import SpeakerCount, StoredMessage
from pallas.core.turn import anonymous_member_label

# Keep one row far below SQLite's 1 GB limit while never refusing a real QQ message
# (QQ caps text around 5k chars; 100k-char synthetic input is stored truncated).
MAX_STORED_CHARS = 200_000
_CHUNK = 200


def _row_values(msg: StoredMessage) -> dict[str, Any]:
    return {
        "self_id": msg.bot_id,
        "group_id": msg.group_id,
        "message_id": msg.message_id,
        "user_id": msg.user_id,
        "card": msg.card[:128],
        "nickname": msg.nickname[:128],
        "role": (msg.role or "member")[:16],
        "raw_message": msg.raw_message[:MAX_STORED_CHARS],
        "segments": list(msg.segments),
        "plain_text": msg.text[:MAX_STORED_CHARS],
        "reply_to": msg.reply_to,
        "is_bot": msg.is_bot,
        "time": msg.time,
        "line_key": msg.line_key or None,
        "sent_by": msg.sent_by[:64] or None,
    }


def _to_record(row: MessageRow) -> StoredMessage:
    return StoredMessage(
        bot_id=row.self_id,
        group_id=row.group_id,
        message_id=row.message_id,
        user_id=row.user_id,
        time=row.time,
        text=row.plain_text,
        raw_message=row.raw_message,
        segments=tuple(row.segments or ()),
        card=row.card,
        nickname=row.nickname,
        role=row.role,
        reply_to=row.reply_to,
        is_bot=row.is_bot,
        row_id=row.id,
        line_key=row.line_key or "",
        sent_by=row.sent_by or "",
    )


def message_scope(bot_id: int, group_id: int) -> list[Any]:
    """The rows an account reads as one chat: a group's lines whichever account of the
    deployment stored them (each line is stored once, `pallas.core.lines`); a private chat
    (group 0) only the account's own. Served by `ix_message_group_time` (group_id, time)."""
    if group_id:
        return [MessageRow.group_id == group_id]
    return [MessageRow.self_id == bot_id, MessageRow.group_id == 0]


def _members_in_window(bot_id: int, group_id: int, since: float, until: float) -> list[Any]:
    """Scope + [since, until) + members only (the bot's own rows excluded)."""
    return [
        *message_scope(bot_id, group_id),
        MessageRow.time >= since,
        MessageRow.time < until,
        MessageRow.is_bot.is_(False),
    ]


class MessageRepository:
    def __init__(
        self, sessions: async_sessionmaker[AsyncSession], *, events: IngestEvents | None = None
    ) -> None:
        self._sessions = sessions
        # told of every batch stored through this instance (warm caches of recent rows)
        self.events = events or IngestEvents()

    async def add_many(self, messages: Iterable[StoredMessage]) -> int:
        """Insert, ignoring duplicates of (bot, group, message_id) and of (group, line key):
        another account's copy of a stored line. Returns rows inserted."""
        messages = list(messages)
        values = [_row_values(m) for m in messages]
        if not values:
            return 0
        inserted = 0
        async with self._sessions() as session:
            dialect = dialect_name(session)
            insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
            # Multi-row VALUES in chunks (stays under SQLite's bound-parameter limit).
            for start in range(0, len(values), _CHUNK):
                stmt = (
                    insert(MessageRow)
                    .values(values[start : start + _CHUNK])
                    .on_conflict_do_nothing()  # any unique index: message id or line key
                )
                result = await session.execute(stmt)
                inserted += max(rowcount(result), 0)
            await session.commit()
        self.events.stored(messages)
        return inserted

    async def add(self, message: StoredMessage) -> bool:
        return await self.add_many([message]) == 1

    async def recent(
        self, bot_id: int, group_id: int, *, limit: int, before_time: float | None = None
    ) -> list[StoredMessage]:
        """The newest `limit` messages of a group, returned oldest first."""
        stmt = select(MessageRow).where(*message_scope(bot_id, group_id))
        if before_time is not None:
            stmt = stmt.where(MessageRow.time < before_time)
        stmt = stmt.order_by(MessageRow.time.desc(), MessageRow.id.desc()).limit(limit)
        async with self._sessions() as session:
            rows = (await session.scalars(stmt)).all()
        return [_to_record(r) for r in reversed(rows)]

    async def find_by_message_ids(
        self, bot_id: int, group_id: int, message_ids: Sequence[int]
    ) -> dict[int, StoredMessage]:
        """Rows by message id: ids are per account, so only the rows `bot_id` stored (a line
        another account stored first is not found by this account's id)."""
        if not message_ids:
            return {}
        stmt = select(MessageRow).where(
            MessageRow.self_id == bot_id,
            MessageRow.group_id == group_id,
            MessageRow.message_id.in_(list(message_ids)),
        )
        async with self._sessions() as session:
            rows = (await session.scalars(stmt)).all()
        return {r.message_id: _to_record(r) for r in rows}

    async def since_row(
        self, bot_id: int, group_id: int, after_row_id: int, *, limit: int
    ) -> list[StoredMessage]:
        """Messages after a row cursor, oldest first (for background sweeps that resume)."""
        stmt = (
            select(MessageRow)
            .where(*message_scope(bot_id, group_id), MessageRow.id > after_row_id)
            .order_by(MessageRow.id)
            .limit(limit)
        )
        async with self._sessions() as session:
            rows = (await session.scalars(stmt)).all()
        return [_to_record(r) for r in rows]

    async def count(self, bot_id: int | None = None, group_id: int | None = None) -> int:
        """Stored rows: of a group's chat as `bot_id` reads it (`message_scope`) when both are
        given, else of the group / of what the account stored / of the whole table."""
        stmt = select(func.count()).select_from(MessageRow)
        if bot_id is not None and group_id is not None:
            stmt = stmt.where(*message_scope(bot_id, group_id))
        elif bot_id is not None:
            stmt = stmt.where(MessageRow.self_id == bot_id)
        elif group_id is not None:
            stmt = stmt.where(MessageRow.group_id == group_id)
        async with self._sessions() as session:
            return int((await session.execute(stmt)).scalar_one())

    async def groups(self, bot_id: int | None = None) -> list[tuple[int, int]]:
        """Distinct (bot, group) pairs that have messages."""
        stmt = select(MessageRow.self_id, MessageRow.group_id).distinct()
        if bot_id is not None:
            stmt = stmt.where(MessageRow.self_id == bot_id)
        async with self._sessions() as session:
            return [(int(a), int(b)) for a, b in (await session.execute(stmt)).all()]

    async def speaker_counts(
        self, bot_id: int, group_id: int, *, since: float, until: float, limit: int
    ) -> list[SpeakerCount]:
        """Members ranked by messages in [since, until), most first (ties: lower user_id first).

        The bot's own rows are excluded. The name is the member's latest non-empty card in the
        window, else the latest non-empty nickname, else the anonymous label. Two queries: the
        ranking (with the row ids holding those names), then those rows.
        """
        if limit <= 0:
            return []
        count = func.count().label("n")
        ranking = (
            select(
                MessageRow.user_id,
                count,
                func.max(case((func.trim(MessageRow.card) != "", MessageRow.id))),
                func.max(case((func.trim(MessageRow.nickname) != "", MessageRow.id))),
            )
            .where(*_members_in_window(bot_id, group_id, since, until))
            .group_by(MessageRow.user_id)
            .order_by(count.desc(), MessageRow.user_id)
            .limit(limit)
        )
        async with self._sessions() as session:
            ranked = (await session.execute(ranking)).all()
            name_ids = {i for _, _, card_id, nick_id in ranked for i in (card_id, nick_id) if i}
            names = select(MessageRow.id, MessageRow.card, MessageRow.nickname).where(
                MessageRow.id.in_(name_ids)
            )
            rows = (await session.execute(names)).all() if name_ids else []
        cards = {row_id: card.strip() for row_id, card, _ in rows}
        nicknames = {row_id: nickname.strip() for row_id, _, nickname in rows}
        return [
            SpeakerCount(
                user_id=int(user_id),
                name=cards.get(card_id, "")
                or nicknames.get(nick_id, "")
                or anonymous_member_label(int(user_id)),
                count=int(n),
            )
            for user_id, n, card_id, nick_id in ranked
        ]

    async def message_count(self, bot_id: int, group_id: int, *, since: float, until: float) -> int:
        """Members' messages in [since, until) (the bot's own rows excluded)."""
        stmt = (
            select(func.count())
            .select_from(MessageRow)
            .where(*_members_in_window(bot_id, group_id, since, until))
        )
        async with self._sessions() as session:
            return int((await session.execute(stmt)).scalar_one())

    async def search(
        self,
        bot_id: int,
        group_id: int,
        *,
        text: str = "",
        user_id: int | None = None,
        limit: int,
        offset: int = 0,
    ) -> list[StoredMessage]:
        """A group's messages, newest first: those whose text contains `text` (a plain
        substring, `%` / `_` matched literally) and / or sent by `user_id`; `offset` pages."""
        stmt = select(MessageRow).where(*message_scope(bot_id, group_id))
        if text:
            stmt = stmt.where(MessageRow.plain_text.contains(text, autoescape=True))
        if user_id is not None:
            stmt = stmt.where(MessageRow.user_id == user_id)
        stmt = stmt.order_by(MessageRow.time.desc(), MessageRow.id.desc())
        stmt = stmt.offset(max(0, offset)).limit(max(0, limit))
        async with self._sessions() as session:
            rows = (await session.scalars(stmt)).all()
        return [_to_record(r) for r in rows]
