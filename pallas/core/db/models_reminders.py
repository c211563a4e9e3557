"""ORM model of the reminders members and admins set (`features/reminders`).

- `reminder` — one reminder: who set it (`user_id`), where (`group_id`, 0 = a private chat),
  the account that took it (`bot_id`), what to say (`text`, as written), when (`next_at`, unix
  seconds) and, for a repeating one, its rule ("daily 07:00", "weekly:5 17:00", "every:60m").
  A firing is claimed by one conditional update (`status` pending → firing at that `next_at`),
  so several processes on one database fire it once. Rows are kept after they fired or were
  cancelled (the console lists recent ones); retention is by `status` and age.

Migration: `migrations/versions/0017_reminders.py` (branch ``reminders``).
"""

from __future__ import annotations

from sqlalchemy import BigInteger, Boolean, Float, Index, Integer
from sqlalchemy.orm import Mapped, mapped_column

from pallas.core.db.models import Base, PrimaryKey
from pallas.core.db.types import String, Text  # not SQLAlchemy's: see types.py


class ReminderRow(Base):
    __tablename__ = "reminder"
    __table_args__ = (
        Index("ix_reminder_due", "status", "next_at"),
        Index("ix_reminder_group", "group_id", "status"),
        Index("ix_reminder_owner", "user_id", "status"),
    )

    id: Mapped[int] = mapped_column(PrimaryKey, primary_key=True, autoincrement=True)
    bot_id: Mapped[int] = mapped_column(BigInteger)  # the account that took it (fires it)
    group_id: Mapped[int] = mapped_column(BigInteger)  # 0: set in a private chat (a DM)
    user_id: Mapped[int] = mapped_column(BigInteger)  # who set it (the one @-ed)
    everyone: Mapped[bool] = mapped_column(Boolean, default=False)  # 提醒大家 (admins)
    text: Mapped[str] = mapped_column(Text, default="")  # what to remind about, as written
    source: Mapped[str] = mapped_column(Text, default="")  # the member's line
    rule: Mapped[str] = mapped_column(String(32), default="")  # "" once, else the repeat rule
    next_at: Mapped[float] = mapped_column(Float)  # unix seconds of the next firing
    status: Mapped[str] = mapped_column(String(16), default="pending")
    # pending | firing | done | cancelled | missed | failed
    created_at: Mapped[float] = mapped_column(Float)
    fired_at: Mapped[float | None] = mapped_column(Float, nullable=True)  # the last firing
    fire_count: Mapped[int] = mapped_column(Integer, default=0)
    claim: Mapped[str] = mapped_column(String(64), default="")  # the firing process's token
    claimed_at: Mapped[float | None] = mapped_column(Float, nullable=True)
    note: Mapped[str] = mapped_column(String(200), default="")  # the last outcome, for admins
