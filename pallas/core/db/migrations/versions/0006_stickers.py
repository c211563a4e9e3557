"""sticker pool per group

Revision ID: 0006_stickers
Revises: 0002
Create Date: 2026-12-01 10:40:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006_stickers"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = ("stickers",)
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "sticker",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("bot_id", sa.BigInteger(), nullable=False),
        sa.Column("group_id", sa.BigInteger(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("file_key", sa.String(length=191), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("face", sa.JSON(), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("mime", sa.String(length=64), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("name", sa.String(length=32), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("banned", sa.Boolean(), nullable=False),
        sa.Column("seen_count", sa.Integer(), nullable=False),
        sa.Column("sent_count", sa.Integer(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("first_seen_at", sa.Float(), nullable=False),
        sa.Column("last_seen_at", sa.Float(), nullable=False),
        sa.Column("last_sent_at", sa.Float(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("sticker", schema=None) as batch_op:
        batch_op.create_index(
            "ix_sticker_group_key", ["bot_id", "group_id", "file_key"], unique=True
        )
        batch_op.create_index("ix_sticker_group_hash", ["bot_id", "group_id", "sha256"])
        batch_op.create_index("ix_sticker_status", ["status", "id"])


def downgrade() -> None:
    with op.batch_alter_table("sticker", schema=None) as batch_op:
        batch_op.drop_index("ix_sticker_status")
        batch_op.drop_index("ix_sticker_group_hash")
        batch_op.drop_index("ix_sticker_group_key")
    op.drop_table("sticker")
