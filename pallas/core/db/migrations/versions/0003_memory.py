"""memory store: the memory_item table (all retrievable memory / knowledge kinds)

Revision ID: 0003_memory
Revises: 0002
Create Date: 2026-11-29 20:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003_memory"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = ("memory",)
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "memory_item",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("bot_id", sa.BigInteger(), nullable=False),
        sa.Column("scope", sa.String(length=96), nullable=False),
        sa.Column("kind", sa.String(length=24), nullable=False),
        sa.Column("subject_user_id", sa.BigInteger(), nullable=True),
        sa.Column("author_user_id", sa.BigInteger(), nullable=True),
        sa.Column("subject_name", sa.String(length=64), nullable=False),
        sa.Column("key", sa.String(length=128), nullable=False),
        sa.Column("fingerprint", sa.String(length=255), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("origin", sa.String(length=16), nullable=False),
        sa.Column("source", sa.JSON(), nullable=False),
        sa.Column("embedding", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.Column("last_access_at", sa.Float(), nullable=True),
        sa.Column("access_count", sa.Integer(), nullable=False),
        sa.Column("deleted_at", sa.Float(), nullable=True),
        sa.Column("delete_reason", sa.String(length=32), nullable=True),
        sa.Column("replaced_by", sa.BigInteger(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("memory_item", schema=None) as batch_op:
        batch_op.create_index(
            "ix_memory_item_lookup",
            ["scope", "kind", "subject_user_id", "deleted_at"],
            unique=False,
        )
        batch_op.create_index(
            "ix_memory_item_key", ["scope", "kind", "subject_user_id", "key"], unique=False
        )
        batch_op.create_index(
            "ix_memory_item_fingerprint", ["scope", "kind", "fingerprint"], unique=False
        )
        batch_op.create_index("ix_memory_item_subject", ["bot_id", "subject_user_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("memory_item", schema=None) as batch_op:
        batch_op.drop_index("ix_memory_item_subject")
        batch_op.drop_index("ix_memory_item_fingerprint")
        batch_op.drop_index("ix_memory_item_key")
        batch_op.drop_index("ix_memory_item_lookup")
    op.drop_table("memory_item")
