"""The per-group sticker pool (`sticker` table, branch ``stickers``).

Every query is scoped by (bot_id, group_id) except the two the background job needs across
groups: the pending queue and the description cache by hash (a description is not a sticker:
another group's stickers are never returned for sending).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from pallas.core.db.engine import rowcount
from pallas.core.db.models_stickers import StickerRow

PENDING, DESCRIBED, FAILED = "pending", "described", "failed"


@dataclass(frozen=True, slots=True)
class Sighting:
    """A sticker seen in a group message (before any download)."""

    kind: str  # image | mface
    file_key: str
    url: str = ""
    face: dict[str, Any] = field(default_factory=dict)  # mface segment data
    summary: str = ""


@dataclass(frozen=True, slots=True)
class Sticker:
    id: int
    bot_id: int
    group_id: int
    kind: str
    file_key: str
    url: str
    face: dict[str, Any]
    sha256: str
    mime: str
    status: str
    name: str
    description: str
    banned: bool
    seen_count: int
    sent_count: int
    attempts: int
    first_seen_at: float
    last_seen_at: float


def _to_sticker(row: StickerRow) -> Sticker:
    return Sticker(
        id=row.id,
        bot_id=row.bot_id,
        group_id=row.group_id,
        kind=row.kind,
        file_key=row.file_key,
        url=row.url or "",
        face=dict(row.face or {}),
        sha256=row.sha256 or "",
        mime=row.mime or "",
        status=row.status,
        name=row.name or "",
        description=row.description or "",
        banned=bool(row.banned),
        seen_count=int(row.seen_count or 0),
        sent_count=int(row.sent_count or 0),
        attempts=int(row.attempts or 0),
        first_seen_at=float(row.first_seen_at),
        last_seen_at=float(row.last_seen_at),
    )


class StickerRepository:
    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self._sessions = sessions

    async def record_sighting(
        self, bot_id: int, group_id: int, sighting: Sighting, *, now: float
    ) -> Sticker:
        """A member sent this sticker: count it, or add it to the pool as pending."""
        try:
            return await self._record_sighting(bot_id, group_id, sighting, now=now)
        except IntegrityError:  # the same sticker inserted concurrently: count it in
            return await self._record_sighting(bot_id, group_id, sighting, now=now)

    async def _record_sighting(
        self, bot_id: int, group_id: int, sighting: Sighting, *, now: float
    ) -> Sticker:
        key = sighting.file_key[:191]
        async with self._sessions() as session:
            row = await session.scalar(
                select(StickerRow).where(
                    StickerRow.bot_id == bot_id,
                    StickerRow.group_id == group_id,
                    StickerRow.file_key == key,
                )
            )
            if row is None:
                row = StickerRow(
                    bot_id=bot_id,
                    group_id=group_id,
                    kind=sighting.kind,
                    file_key=key,
                    url=sighting.url,
                    face=dict(sighting.face),
                    sha256="",
                    mime="",
                    status=PENDING,
                    name="",
                    description="",
                    banned=False,
                    seen_count=1,
                    sent_count=0,
                    attempts=0,
                    first_seen_at=now,
                    last_seen_at=now,
                )
                session.add(row)
            else:
                row.seen_count = int(row.seen_count or 0) + 1
                row.last_seen_at = now
                if sighting.url:
                    row.url = sighting.url  # QQ download URLs expire: keep the newest
            await session.commit()
            return _to_sticker(row)

    async def pending(self, limit: int) -> list[Sticker]:
        """Stickers still to be downloaded / described, oldest first, across groups."""
        stmt = (
            select(StickerRow)
            .where(StickerRow.status == PENDING, StickerRow.banned.is_(False))
            .order_by(StickerRow.id)
            .limit(limit)
        )
        async with self._sessions() as session:
            return [_to_sticker(r) for r in (await session.scalars(stmt)).all()]

    async def store_bytes(self, sticker_id: int, *, sha256: str, mime: str, data: bytes) -> int:
        """Keep the downloaded bytes; when the group already has a sticker with these bytes,
        this row is merged into it (counts added, row deleted). Returns the surviving id."""
        async with self._sessions() as session:
            row = await session.get(StickerRow, sticker_id)
            if row is None:
                return 0
            twin = await session.scalar(
                select(StickerRow).where(
                    StickerRow.bot_id == row.bot_id,
                    StickerRow.group_id == row.group_id,
                    StickerRow.sha256 == sha256,
                    StickerRow.id != row.id,
                )
            )
            if twin is not None:
                twin.seen_count = int(twin.seen_count or 0) + int(row.seen_count or 0)
                twin.last_seen_at = max(float(twin.last_seen_at), float(row.last_seen_at))
                await session.delete(row)
                await session.commit()
                return int(twin.id)
            row.sha256, row.mime, row.data = sha256, mime[:64], data
            await session.commit()
            return int(row.id)

    async def mark(
        self,
        sticker_id: int,
        *,
        status: str,
        name: str = "",
        description: str = "",
        attempt: bool = True,
    ) -> None:
        values: dict[str, Any] = {"status": status}
        if name:
            values["name"] = name[:32]
        if description:
            values["description"] = description
        if attempt:
            values["attempts"] = StickerRow.attempts + 1
        async with self._sessions() as session:
            await session.execute(
                update(StickerRow).where(StickerRow.id == sticker_id).values(**values)
            )
            await session.commit()

    async def description_by_hash(self, sha256: str) -> tuple[str, str] | None:
        """(name, description) of any described sticker with these bytes (the cache by hash)."""
        if not sha256:
            return None
        stmt = (
            select(StickerRow.name, StickerRow.description)
            .where(StickerRow.sha256 == sha256, StickerRow.status == DESCRIBED)
            .limit(1)
        )
        async with self._sessions() as session:
            found = (await session.execute(stmt)).first()
        return (found[0], found[1]) if found else None

    async def pool(
        self, bot_id: int, group_id: int, *, include_banned: bool = False, limit: int = 200
    ) -> list[Sticker]:
        """The group's described stickers, most sent by members first."""
        stmt = select(StickerRow).where(
            StickerRow.bot_id == bot_id,
            StickerRow.group_id == group_id,
            StickerRow.status == DESCRIBED,
        )
        if not include_banned:
            stmt = stmt.where(StickerRow.banned.is_(False))
        stmt = stmt.order_by(StickerRow.seen_count.desc(), StickerRow.id).limit(limit)
        async with self._sessions() as session:
            return [_to_sticker(r) for r in (await session.scalars(stmt)).all()]

    async def for_group(self, bot_id: int, group_id: int, *, limit: int = 50) -> list[Sticker]:
        """Every sticker of the group (any status), newest first (admin list)."""
        stmt = (
            select(StickerRow)
            .where(StickerRow.bot_id == bot_id, StickerRow.group_id == group_id)
            .order_by(StickerRow.seen_count.desc(), StickerRow.id.desc())
            .limit(limit)
        )
        async with self._sessions() as session:
            return [_to_sticker(r) for r in (await session.scalars(stmt)).all()]

    async def get(self, bot_id: int, group_id: int, sticker_id: int) -> Sticker | None:
        async with self._sessions() as session:
            row = await session.get(StickerRow, sticker_id)
        if row is None or row.bot_id != bot_id or row.group_id != group_id:
            return None
        return _to_sticker(row)

    async def find_by_file_key(self, bot_id: int, group_id: int, file_key: str) -> Sticker | None:
        stmt = select(StickerRow).where(
            StickerRow.bot_id == bot_id,
            StickerRow.group_id == group_id,
            StickerRow.file_key == file_key[:191],
        )
        async with self._sessions() as session:
            row = await session.scalar(stmt)
        return _to_sticker(row) if row is not None else None

    async def data_of(self, bot_id: int, group_id: int, sticker_id: int) -> bytes | None:
        stmt = select(StickerRow.data).where(
            StickerRow.id == sticker_id,
            StickerRow.bot_id == bot_id,
            StickerRow.group_id == group_id,
        )
        async with self._sessions() as session:
            data: bytes | None = await session.scalar(stmt)
            return data

    async def set_banned(self, bot_id: int, group_id: int, sticker_id: int, banned: bool) -> bool:
        stmt = (
            update(StickerRow)
            .where(
                StickerRow.id == sticker_id,
                StickerRow.bot_id == bot_id,
                StickerRow.group_id == group_id,
            )
            .values(banned=banned)
        )
        async with self._sessions() as session:
            result = await session.execute(stmt)
            await session.commit()
        return bool(rowcount(result))

    async def delete(self, bot_id: int, group_id: int, sticker_id: int) -> bool:
        stmt = delete(StickerRow).where(
            StickerRow.id == sticker_id,
            StickerRow.bot_id == bot_id,
            StickerRow.group_id == group_id,
        )
        async with self._sessions() as session:
            result = await session.execute(stmt)
            await session.commit()
        return bool(rowcount(result))

    async def note_sent(self, sticker_id: int, *, now: float) -> None:
        stmt = (
            update(StickerRow)
            .where(StickerRow.id == sticker_id)
            .values(sent_count=StickerRow.sent_count + 1, last_sent_at=now)
        )
        async with self._sessions() as session:
            await session.execute(stmt)
            await session.commit()

    async def count(self, bot_id: int, group_id: int) -> int:
        stmt = select(func.count(StickerRow.id)).where(
            StickerRow.bot_id == bot_id, StickerRow.group_id == group_id
        )
        async with self._sessions() as session:
            return int(await session.scalar(stmt) or 0)
