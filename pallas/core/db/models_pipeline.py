"""ORM models of the context pipeline's durable state: session variables.

- `session_variable` — the current value of one declared variable of a group (member_id 0) or
  of one member; `version` grows with every committed change (optimistic concurrency) and
  `turn_id` names the reply turn (or admin command) that wrote it.
- `session_variable_event` — one row per applied change: the audit trail per turn.

Migration: `migrations/versions/0007_pipeline_state.py` (branch ``pipeline_state``).
"""

from __future__ import annotations

from sqlalchemy import BigInteger, Float, Index, Integer
from sqlalchemy.orm import Mapped, mapped_column

from pallas.core.db.models import Base, PrimaryKey
from pallas.core.db.types import String, Text  # not SQLAlchemy's: see types.py


class SessionVariableRow(Base):
    __tablename__ = "session_variable"
    __table_args__ = (
        Index("uq_session_variable_key", "bot_id", "group_id", "member_id", "name", unique=True),
    )

    id: Mapped[int] = mapped_column(PrimaryKey, primary_key=True, autoincrement=True)
    bot_id: Mapped[int] = mapped_column(BigInteger)
    group_id: Mapped[int] = mapped_column(BigInteger)
    member_id: Mapped[int] = mapped_column(BigInteger)  # 0 = group scope
    name: Mapped[str] = mapped_column(String(64))
    value: Mapped[str] = mapped_column(Text)  # JSON scalar
    version: Mapped[int] = mapped_column(Integer, default=1)
    turn_id: Mapped[str] = mapped_column(String(64))
    actor: Mapped[str] = mapped_column(String(64))  # "model" | "admin:<user id>"
    updated_at: Mapped[float] = mapped_column(Float)


class SessionVariableEventRow(Base):
    __tablename__ = "session_variable_event"
    __table_args__ = (Index("ix_session_variable_event_group", "bot_id", "group_id", "id"),)

    id: Mapped[int] = mapped_column(PrimaryKey, primary_key=True, autoincrement=True)
    bot_id: Mapped[int] = mapped_column(BigInteger)
    group_id: Mapped[int] = mapped_column(BigInteger)
    member_id: Mapped[int] = mapped_column(BigInteger)
    name: Mapped[str] = mapped_column(String(64))
    op: Mapped[str] = mapped_column(String(16))  # set + - * / reset
    operand: Mapped[str] = mapped_column(Text)
    old_value: Mapped[str] = mapped_column(Text)
    new_value: Mapped[str] = mapped_column(Text)
    turn_id: Mapped[str] = mapped_column(String(64))
    actor: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[float] = mapped_column(Float)
