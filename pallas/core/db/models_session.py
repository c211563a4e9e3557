"""ORM models of long sessions: archived session summaries and image descriptions.

- `session_topic` — every `【此前对话摘要】` written by the session compressor is also archived
  here as an "old topic" of its subject user, in the conversation's own scope (see
  `pallas.features.memory.isolation`), and recalled by topic as 【相关旧话题】.
- `image_description` — the vision model's one-line description of an image, keyed by the
  sha256 of the image bytes, so each image is described at most once.

Migration: `migrations/versions/0005_session_topics_and_image_descriptions.py` (branch
``session``).
"""

from __future__ import annotations

from sqlalchemy import BigInteger, Float, Index, Integer
from sqlalchemy.orm import Mapped, mapped_column

from pallas.core.db.models import Base, PrimaryKey
from pallas.core.db.types import String, Text  # not SQLAlchemy's: see types.py


class SessionTopicRow(Base):
    """One archived session summary: what a user and the bot talked about, and when."""

    __tablename__ = "session_topic"
    __table_args__ = (
        Index("ix_session_topic_subject", "bot_id", "group_id", "user_id", "id"),
        Index("ix_session_topic_group_time", "bot_id", "group_id", "created_at"),
    )

    id: Mapped[int] = mapped_column(PrimaryKey, primary_key=True, autoincrement=True)
    bot_id: Mapped[int] = mapped_column(BigInteger)
    group_id: Mapped[int] = mapped_column(BigInteger)  # 0 = private chat
    user_id: Mapped[int] = mapped_column(BigInteger)  # the subject user of the session
    scope: Mapped[str] = mapped_column(String(96))  # group:<bot>:<group> / private:<bot>:<user>
    text: Mapped[str] = mapped_column(Text)  # the summary, without the 【此前对话摘要】 prefix
    first_turn_at: Mapped[float] = mapped_column(Float)  # span of the summarised conversation
    last_turn_at: Mapped[float] = mapped_column(Float)
    turn_count: Mapped[int] = mapped_column(Integer, default=0)  # rows summarised (new ones)
    created_at: Mapped[float] = mapped_column(Float)
    last_access_at: Mapped[float | None] = mapped_column(Float, nullable=True)
    access_count: Mapped[int] = mapped_column(Integer, default=0)


class ImageDescriptionRow(Base):
    """A cached vision-model description of one image (by content hash, not by URL)."""

    __tablename__ = "image_description"

    sha256: Mapped[str] = mapped_column(String(64), primary_key=True)
    description: Mapped[str] = mapped_column(Text)
    model: Mapped[str] = mapped_column(String(128), default="")
    created_at: Mapped[float] = mapped_column(Float)
