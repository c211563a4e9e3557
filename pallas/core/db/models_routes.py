"""ORM model of the routing history: one row per routing decision record.

- `route_decision` — what the router decided for one member message (the record the console's
  routing page and `/pallas why` show), and the later records of the same message whose fate a
  later stage changed (the cost guard's refusal, `error` when the model call failed). Rows are
  appended, never updated: the page shows a failed turn's decision and its failure one after
  the other, as the route log does.

Migration: `migrations/versions/0013_route_history.py` (branch ``route_history``).
"""

from __future__ import annotations

from sqlalchemy import BigInteger, Float, Index
from sqlalchemy.orm import Mapped, mapped_column

from pallas.core.db.models import Base, PrimaryKey
from pallas.core.db.types import String, Text


class RouteDecisionRow(Base):
    __tablename__ = "route_decision"
    __table_args__ = (
        Index("ix_route_decision_scope", "bot_id", "group_id", "id"),  # a group's page, retention
        Index("ix_route_decision_outcome", "outcome", "created_at"),  # failures of the day
    )

    id: Mapped[int] = mapped_column(PrimaryKey, primary_key=True, autoincrement=True)
    bot_id: Mapped[int] = mapped_column(BigInteger)
    group_id: Mapped[int] = mapped_column(BigInteger)
    user_id: Mapped[int] = mapped_column(BigInteger)
    message_id: Mapped[int] = mapped_column(BigInteger)
    created_at: Mapped[float] = mapped_column(Float)  # the record's time (the router's clock)
    outcome: Mapped[str] = mapped_column(String(32))  # reply / skip / … / error
    stage: Mapped[str] = mapped_column(String(32))
    reason: Mapped[str] = mapped_column(String(128))
    # the whole record as JSON text: serialised once when the batch is written (a JSON column
    # would encode it again), parsed only when a page reads it
    data: Mapped[str] = mapped_column(Text, default="{}")
