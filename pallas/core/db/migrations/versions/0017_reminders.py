"""reminders: the reminders members and admins set, fired once at their time

Revision ID: 0017_reminders
Revises: 0002
Create Date: 2026-12-06 08:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017_reminders"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = ("reminders",)
depends_on: str | Sequence[str] | None = None

_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "reminder",
        sa.Column("id", _ID, autoincrement=True, nullable=False),
        sa.Column("bot_id", sa.BigInteger(), nullable=False),
        sa.Column("group_id", sa.BigInteger(), nullable=False),
        sa.Column("user_id", sa.BigInteger(), nullable=False),
        sa.Column("everyone", sa.Boolean(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("rule", sa.String(length=32), nullable=False),
        sa.Column("next_at", sa.Float(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("fired_at", sa.Float(), nullable=True),
        sa.Column("fire_count", sa.Integer(), nullable=False),
        sa.Column("claim", sa.String(length=64), nullable=False),
        sa.Column("claimed_at", sa.Float(), nullable=True),
        sa.Column("note", sa.String(length=200), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("reminder", schema=None) as batch_op:
        batch_op.create_index("ix_reminder_due", ["status", "next_at"], unique=False)
        batch_op.create_index("ix_reminder_group", ["group_id", "status"], unique=False)
        batch_op.create_index("ix_reminder_owner", ["user_id", "status"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("reminder", schema=None) as batch_op:
        batch_op.drop_index("ix_reminder_owner")
        batch_op.drop_index("ix_reminder_group")
        batch_op.drop_index("ix_reminder_due")
    op.drop_table("reminder")
