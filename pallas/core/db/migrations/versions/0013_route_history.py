"""routing history: every routing decision record, kept across restarts

Revision ID: 0013_route_history
Revises: 0002
Create Date: 2026-12-04 07:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013_route_history"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = ("route_history",)
depends_on: str | Sequence[str] | None = None

_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "route_decision",
        sa.Column("id", _ID, autoincrement=True, nullable=False),
        sa.Column("bot_id", sa.BigInteger(), nullable=False),
        sa.Column("group_id", sa.BigInteger(), nullable=False),
        sa.Column("user_id", sa.BigInteger(), nullable=False),
        sa.Column("message_id", sa.BigInteger(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("outcome", sa.String(length=32), nullable=False),
        sa.Column("stage", sa.String(length=32), nullable=False),
        sa.Column("reason", sa.String(length=128), nullable=False),
        sa.Column("data", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("route_decision", schema=None) as batch_op:
        batch_op.create_index("ix_route_decision_scope", ["bot_id", "group_id", "id"])
        batch_op.create_index("ix_route_decision_outcome", ["outcome", "created_at"])


def downgrade() -> None:
    with op.batch_alter_table("route_decision", schema=None) as batch_op:
        batch_op.drop_index("ix_route_decision_outcome")
        batch_op.drop_index("ix_route_decision_scope")
    op.drop_table("route_decision")
