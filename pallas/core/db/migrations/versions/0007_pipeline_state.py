"""context pipeline state: session variables and their change log

Revision ID: 0007_pipeline_state
Revises: 0002
Create Date: 2026-12-01 11:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007_pipeline_state"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = ("pipeline_state",)
depends_on: str | Sequence[str] | None = None

_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "session_variable",
        sa.Column("id", _ID, autoincrement=True, nullable=False),
        sa.Column("bot_id", sa.BigInteger(), nullable=False),
        sa.Column("group_id", sa.BigInteger(), nullable=False),
        sa.Column("member_id", sa.BigInteger(), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("turn_id", sa.String(length=64), nullable=False),
        sa.Column("actor", sa.String(length=64), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("session_variable", schema=None) as batch_op:
        batch_op.create_index(
            "uq_session_variable_key", ["bot_id", "group_id", "member_id", "name"], unique=True
        )
    op.create_table(
        "session_variable_event",
        sa.Column("id", _ID, autoincrement=True, nullable=False),
        sa.Column("bot_id", sa.BigInteger(), nullable=False),
        sa.Column("group_id", sa.BigInteger(), nullable=False),
        sa.Column("member_id", sa.BigInteger(), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("op", sa.String(length=16), nullable=False),
        sa.Column("operand", sa.Text(), nullable=False),
        sa.Column("old_value", sa.Text(), nullable=False),
        sa.Column("new_value", sa.Text(), nullable=False),
        sa.Column("turn_id", sa.String(length=64), nullable=False),
        sa.Column("actor", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("session_variable_event", schema=None) as batch_op:
        batch_op.create_index(
            "ix_session_variable_event_group", ["bot_id", "group_id", "id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("session_variable_event", schema=None) as batch_op:
        batch_op.drop_index("ix_session_variable_event_group")
    op.drop_table("session_variable_event")
    with op.batch_alter_table("session_variable", schema=None) as batch_op:
        batch_op.drop_index("uq_session_variable_key")
    op.drop_table("session_variable")
