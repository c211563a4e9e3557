"""ORM models of group learning (migration `0004_learning`, branch `learning`).

Everything is keyed by bot × group × scene. `scene` exists so a third dimension
(bot × 群 × scene) is in the schema from the start; today every row is "group_chat".
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Float,
    Index,
    Integer,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from pallas.core.db.models import Base, PrimaryKey
from pallas.core.db.types import String, Text  # not SQLAlchemy's: see types.py

DEFAULT_SCENE = "group_chat"


class LearningReplyPairRow(Base):
    """A trigger → response pair rebuilt from the `message` table (observed / self_reflection)."""

    __tablename__ = "learning_reply_pair"
    __table_args__ = (
        UniqueConstraint(
            "bot_id", "group_id", "scene", "trigger_id", "response_id", name="uq_learning_pair"
        ),
        Index("ix_learning_pair_scope", "bot_id", "group_id", "scene", "learning_type", "id"),
    )

    id: Mapped[int] = mapped_column(PrimaryKey, primary_key=True, autoincrement=True)
    bot_id: Mapped[int] = mapped_column(BigInteger)
    group_id: Mapped[int] = mapped_column(BigInteger)
    scene: Mapped[str] = mapped_column(
        String(32), default=DEFAULT_SCENE, server_default=DEFAULT_SCENE
    )
    trigger_id: Mapped[int] = mapped_column(BigInteger)
    response_id: Mapped[int] = mapped_column(BigInteger)
    trigger_text: Mapped[str] = mapped_column(Text)
    response_text: Mapped[str] = mapped_column(Text)
    context_text: Mapped[str] = mapped_column(Text, default="")
    kind: Mapped[str] = mapped_column(String(16))  # quote | adjacent
    learning_type: Mapped[str] = mapped_column(String(24))  # observed | self_reflection
    trigger_user: Mapped[int] = mapped_column(BigInteger)
    response_user: Mapped[int] = mapped_column(BigInteger)
    response_row_id: Mapped[int] = mapped_column(BigInteger)
    time: Mapped[float] = mapped_column(Float)
    created_at: Mapped[float] = mapped_column(Float)


class LearningPairLabelRow(Base):
    """The cheap model's label of one pair (situation, action, intensity, transferable)."""

    __tablename__ = "learning_pair_label"
    __table_args__ = (
        UniqueConstraint(
            "bot_id", "group_id", "scene", "trigger_id", "response_id", name="uq_learning_label"
        ),
        Index("ix_learning_label_scope", "bot_id", "group_id", "scene", "id"),
    )

    id: Mapped[int] = mapped_column(PrimaryKey, primary_key=True, autoincrement=True)
    bot_id: Mapped[int] = mapped_column(BigInteger)
    group_id: Mapped[int] = mapped_column(BigInteger)
    scene: Mapped[str] = mapped_column(
        String(32), default=DEFAULT_SCENE, server_default=DEFAULT_SCENE
    )
    trigger_id: Mapped[int] = mapped_column(BigInteger)
    response_id: Mapped[int] = mapped_column(BigInteger)
    learning_type: Mapped[str] = mapped_column(String(24))
    situation: Mapped[str] = mapped_column(String(64))
    interaction_action: Mapped[str] = mapped_column(String(96))
    intensity: Mapped[int] = mapped_column(Integer, default=2)
    transferable: Mapped[bool] = mapped_column(Boolean, default=False)
    outcome: Mapped[str] = mapped_column(String(64), default="")
    time: Mapped[float] = mapped_column(Float)
    created_at: Mapped[float] = mapped_column(Float)


class LearningStrategyRow(Base):
    """A behaviour strategy summarised from labels; replaced per group on every refresh."""

    __tablename__ = "learning_behavior_strategy"
    __table_args__ = (Index("ix_learning_strategy_scope", "bot_id", "group_id", "scene"),)

    id: Mapped[int] = mapped_column(PrimaryKey, primary_key=True, autoincrement=True)
    bot_id: Mapped[int] = mapped_column(BigInteger)
    group_id: Mapped[int] = mapped_column(BigInteger)
    scene: Mapped[str] = mapped_column(
        String(32), default=DEFAULT_SCENE, server_default=DEFAULT_SCENE
    )
    learning_type: Mapped[str] = mapped_column(String(24))
    situation: Mapped[str] = mapped_column(String(64))
    action: Mapped[str] = mapped_column(String(96))
    outcome: Mapped[str] = mapped_column(String(64), default="")
    support_count: Mapped[int] = mapped_column(Integer, default=1)
    score: Mapped[float] = mapped_column(Float, default=0.0)
    source_token: Mapped[str] = mapped_column(String(128), default="")
    updated_at: Mapped[float] = mapped_column(Float)


class LearningReplyProfileRow(Base):
    """How members of the group type: bubbles per turn and chars per bubble."""

    __tablename__ = "learning_reply_profile"
    __table_args__ = (UniqueConstraint("bot_id", "group_id", "scene", name="uq_learning_profile"),)

    id: Mapped[int] = mapped_column(PrimaryKey, primary_key=True, autoincrement=True)
    bot_id: Mapped[int] = mapped_column(BigInteger)
    group_id: Mapped[int] = mapped_column(BigInteger)
    scene: Mapped[str] = mapped_column(
        String(32), default=DEFAULT_SCENE, server_default=DEFAULT_SCENE
    )
    sample_turns: Mapped[int] = mapped_column(Integer, default=0)
    sample_bubbles: Mapped[int] = mapped_column(Integer, default=0)
    bubbles_p50: Mapped[float] = mapped_column(Float, default=0.0)
    bubbles_p90: Mapped[float] = mapped_column(Float, default=0.0)
    chars_p50: Mapped[float] = mapped_column(Float, default=0.0)
    chars_p90: Mapped[float] = mapped_column(Float, default=0.0)
    single_bubble_share: Mapped[float] = mapped_column(Float, default=0.0)
    last_row_id: Mapped[int] = mapped_column(BigInteger, default=0)  # newest row it was built on
    updated_at: Mapped[float] = mapped_column(Float)


class LearningCursorRow(Base):
    """Per bot × group × scene: where the sweep resumes, and today's labelling spend."""

    __tablename__ = "learning_cursor"
    __table_args__ = (UniqueConstraint("bot_id", "group_id", "scene", name="uq_learning_cursor"),)

    id: Mapped[int] = mapped_column(PrimaryKey, primary_key=True, autoincrement=True)
    bot_id: Mapped[int] = mapped_column(BigInteger)
    group_id: Mapped[int] = mapped_column(BigInteger)
    scene: Mapped[str] = mapped_column(
        String(32), default=DEFAULT_SCENE, server_default=DEFAULT_SCENE
    )
    last_row_id: Mapped[int] = mapped_column(BigInteger, default=0)
    budget_day: Mapped[str] = mapped_column(String(10), default="")
    calls_today: Mapped[int] = mapped_column(Integer, default=0)
    tokens_today: Mapped[int] = mapped_column(BigInteger, default=0)
    failures_at_cursor: Mapped[int] = mapped_column(Integer, default=0)
    pairs_total: Mapped[int] = mapped_column(BigInteger, default=0)
    labels_total: Mapped[int] = mapped_column(BigInteger, default=0)
    last_error: Mapped[str] = mapped_column(String(64), default="")
    updated_at: Mapped[float] = mapped_column(Float, default=0.0)


class LearningSweepStateRow(Base):
    """The round-robin position of the sweep: the next sweep starts after this bot × group."""

    __tablename__ = "learning_sweep_state"

    name: Mapped[str] = mapped_column(String(32), primary_key=True)
    position_bot_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    position_group_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    sweeps: Mapped[int] = mapped_column(BigInteger, default=0)
    updated_at: Mapped[float] = mapped_column(Float, default=0.0)


class LearningFeedbackRow(Base):
    """An admin's negative feedback on one bot line; unique per bot × group × line × admin."""

    __tablename__ = "learning_feedback_outcome"
    __table_args__ = (
        UniqueConstraint(
            "bot_id", "group_id", "bot_message_id", "admin_id", name="uq_learning_feedback"
        ),
        Index("ix_learning_feedback_scope", "bot_id", "group_id", "id"),
    )

    id: Mapped[int] = mapped_column(PrimaryKey, primary_key=True, autoincrement=True)
    bot_id: Mapped[int] = mapped_column(BigInteger)
    group_id: Mapped[int] = mapped_column(BigInteger)
    bot_message_id: Mapped[int] = mapped_column(BigInteger)
    admin_id: Mapped[int] = mapped_column(BigInteger)
    word: Mapped[str] = mapped_column(String(32), default="")
    bot_text: Mapped[str] = mapped_column(Text, default="")
    turn_id: Mapped[str] = mapped_column(String(64), default="")
    blames: Mapped[list[Any]] = mapped_column(JSON, default=list)
    ignored_sources: Mapped[list[Any]] = mapped_column(JSON, default=list)
    created_at: Mapped[float] = mapped_column(Float)
    undone_at: Mapped[float | None] = mapped_column(Float, nullable=True)
