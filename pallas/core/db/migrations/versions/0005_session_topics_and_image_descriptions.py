"""session topics (old-topic archive) and image descriptions

Revision ID: 0005_session
Revises: 0002
Create Date: 2026-11-30 10:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005_session"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = ("session",)
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "session_topic",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("bot_id", sa.BigInteger(), nullable=False),
        sa.Column("group_id", sa.BigInteger(), nullable=False),
        sa.Column("user_id", sa.BigInteger(), nullable=False),
        sa.Column("scope", sa.String(length=96), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("first_turn_at", sa.Float(), nullable=False),
        sa.Column("last_turn_at", sa.Float(), nullable=False),
        sa.Column("turn_count", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("last_access_at", sa.Float(), nullable=True),
        sa.Column("access_count", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("session_topic", schema=None) as batch_op:
        batch_op.create_index(
            "ix_session_topic_subject", ["bot_id", "group_id", "user_id", "id"], unique=False
        )
        batch_op.create_index(
            "ix_session_topic_group_time", ["bot_id", "group_id", "created_at"], unique=False
        )

    op.create_table(
        "image_description",
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("model", sa.String(length=128), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("sha256"),
    )


def downgrade() -> None:
    op.drop_table("image_description")
    with op.batch_alter_table("session_topic", schema=None) as batch_op:
        batch_op.drop_index("ix_session_topic_group_time")
        batch_op.drop_index("ix_session_topic_subject")
    op.drop_table("session_topic")
