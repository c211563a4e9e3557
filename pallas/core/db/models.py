"""ORM models. Schema changes go through Alembic migrations in `migrations/versions/`."""

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
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from pallas.core.db.types import String, Text  # not SQLAlchemy's: see types.py

# SQLite only auto-increments an INTEGER PRIMARY KEY; PostgreSQL gets a real BIGINT.
PrimaryKey = BigInteger().with_variant(Integer(), "sqlite")


class Base(DeclarativeBase):
    pass


class MessageRow(Base):
    """Every group message seen or sent by a bot account."""

    __tablename__ = "message"
    __table_args__ = (
        # a group's lines are read by group, whichever account stored them (`line_key`)
        Index("ix_message_group_time", "group_id", "time"),
        Index("uq_message_scope_id", "self_id", "group_id", "message_id", unique=True),
        Index("uq_message_group_line", "group_id", "line_key", unique=True),
        Index("ix_message_time_scope", "time", "self_id", "group_id", "is_bot"),  # console
    )

    id: Mapped[int] = mapped_column(PrimaryKey, primary_key=True, autoincrement=True)
    self_id: Mapped[int] = mapped_column(BigInteger)
    group_id: Mapped[int] = mapped_column(BigInteger)
    message_id: Mapped[int] = mapped_column(BigInteger)  # signed, opaque
    user_id: Mapped[int] = mapped_column(BigInteger)
    card: Mapped[str] = mapped_column(String(128), default="")
    nickname: Mapped[str] = mapped_column(String(128), default="")
    role: Mapped[str] = mapped_column(String(16), default="member")
    raw_message: Mapped[str] = mapped_column(Text, default="")
    segments: Mapped[list[Any]] = mapped_column(JSON, default=list)
    plain_text: Mapped[str] = mapped_column(Text, default="")
    reply_to: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    is_bot: Mapped[bool] = mapped_column(Boolean, default=False)
    time: Mapped[float] = mapped_column(Float)
    # `pallas.core.lines`: the same for every account's copy of a member's line (one is
    # stored); NULL for the bot's own sent messages and rows from before it existed
    line_key: Mapped[str | None] = mapped_column(String(48), nullable=True)
    # the other NoneBot plugin that sent this message from the account (its id), NULL for the
    # persona's own lines and members' lines (`pallas.onebot.neighbours`)
    sent_by: Mapped[str | None] = mapped_column(String(64), nullable=True)


class LlmChatMessageRow(Base):
    """Session turns of the LLM chat, per bot × group × user (group 0 = private)."""

    __tablename__ = "llm_chat_message"
    __table_args__ = (
        Index("ix_llm_chat_session", "bot_id", "group_id", "user_id", "id"),
        Index("ix_llm_chat_group", "bot_id", "group_id", "id"),
    )

    id: Mapped[int] = mapped_column(PrimaryKey, primary_key=True, autoincrement=True)
    bot_id: Mapped[int] = mapped_column(BigInteger)
    group_id: Mapped[int] = mapped_column(BigInteger)
    user_id: Mapped[int] = mapped_column(BigInteger)
    role: Mapped[str] = mapped_column(String(16))
    content: Mapped[str] = mapped_column(Text)
    is_summary: Mapped[bool] = mapped_column(Boolean, default=False)
    extra: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    created_at: Mapped[float] = mapped_column(Float)


class UsageLedgerRow(Base):
    """LLM usage per day × bot × group × task × model (for cost reports and daily budgets)."""

    __tablename__ = "usage_ledger"
    __table_args__ = (
        UniqueConstraint(
            "day", "bot_id", "group_id", "task", "model", "endpoint", name="uq_usage_key"
        ),
    )

    id: Mapped[int] = mapped_column(PrimaryKey, primary_key=True, autoincrement=True)
    day: Mapped[str] = mapped_column(String(10))  # YYYY-MM-DD, Asia/Shanghai
    bot_id: Mapped[int] = mapped_column(BigInteger)
    group_id: Mapped[int] = mapped_column(BigInteger)
    task: Mapped[str] = mapped_column(String(32))
    model: Mapped[str] = mapped_column(String(128))
    endpoint: Mapped[str] = mapped_column(String(32), default="")  # which endpoint answered
    calls: Mapped[int] = mapped_column(Integer, default=0)
    failures: Mapped[int] = mapped_column(Integer, default=0)
    prompt_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    completion_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    cached_tokens: Mapped[int] = mapped_column(BigInteger, default=0)  # of prompt_tokens
    reasoning_tokens: Mapped[int] = mapped_column(BigInteger, default=0)  # of completion_tokens


class InjectionSnapshotRow(Base):
    """What one REPLY turn put in front of the model, with provenance and trims."""

    __tablename__ = "injection_snapshot"
    __table_args__ = (Index("ix_snapshot_scope", "bot_id", "group_id", "id"),)

    id: Mapped[int] = mapped_column(PrimaryKey, primary_key=True, autoincrement=True)
    turn_id: Mapped[str] = mapped_column(String(64), unique=True)
    bot_id: Mapped[int] = mapped_column(BigInteger)
    group_id: Mapped[int] = mapped_column(BigInteger)
    user_id: Mapped[int] = mapped_column(BigInteger)
    message_id: Mapped[int] = mapped_column(BigInteger)
    created_at: Mapped[float] = mapped_column(Float)
    model: Mapped[str] = mapped_column(String(128), default="")
    outcome: Mapped[str] = mapped_column(String(32), default="")  # delivered / silent / error:…
    data: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
