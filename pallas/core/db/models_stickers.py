"""ORM model of the per-group sticker pool: the stickers members actually send.

- `sticker` — one sticker seen in one group: an image flagged as a sticker by the OneBot
  implementation (NapCat / Lagrange `sub_type=1`, summary `[动画表情]`) or a market face
  (`mface`). Keyed per group by `file_key` (the implementation's file name / market-face id) and,
  once downloaded, deduplicated by the sha256 of its bytes. The vision model names and
  describes each one once (background job); admins may ban or delete it.

Migration: `migrations/versions/0006_stickers.py` (branch ``stickers``).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, BigInteger, Boolean, Float, Index, Integer, LargeBinary
from sqlalchemy.orm import Mapped, mapped_column

from pallas.core.db.models import Base, PrimaryKey
from pallas.core.db.types import String, Text  # not SQLAlchemy's: see types.py


class StickerRow(Base):
    __tablename__ = "sticker"
    __table_args__ = (
        Index("ix_sticker_group_key", "bot_id", "group_id", "file_key", unique=True),
        Index("ix_sticker_group_hash", "bot_id", "group_id", "sha256"),
        Index("ix_sticker_status", "status", "id"),
    )

    id: Mapped[int] = mapped_column(PrimaryKey, primary_key=True, autoincrement=True)
    bot_id: Mapped[int] = mapped_column(BigInteger)
    group_id: Mapped[int] = mapped_column(BigInteger)
    kind: Mapped[str] = mapped_column(String(16))  # image | mface
    file_key: Mapped[str] = mapped_column(String(191))  # per-group identity before download
    url: Mapped[str] = mapped_column(Text, default="")  # latest download URL seen
    face: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)  # mface segment data
    sha256: Mapped[str] = mapped_column(String(64), default="")  # of the bytes ("" = not yet)
    mime: Mapped[str] = mapped_column(String(64), default="")
    # deferred: pool queries never load the bytes; `data_of` reads them for one sticker
    data: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True, deferred=True)
    # pending → described | failed
    status: Mapped[str] = mapped_column(String(16), default="pending")
    name: Mapped[str] = mapped_column(String(32), default="")
    description: Mapped[str] = mapped_column(Text, default="")
    banned: Mapped[bool] = mapped_column(Boolean, default=False)
    seen_count: Mapped[int] = mapped_column(Integer, default=1)  # times members sent it
    sent_count: Mapped[int] = mapped_column(Integer, default=0)  # times the bot sent it
    attempts: Mapped[int] = mapped_column(Integer, default=0)  # download / describe attempts
    first_seen_at: Mapped[float] = mapped_column(Float)
    last_seen_at: Mapped[float] = mapped_column(Float)
    last_sent_at: Mapped[float | None] = mapped_column(Float, nullable=True)
