"""memory rows count their changes in place: memory_item.revision

Revision ID: 0020_memory_revision
Revises: 0019_memory_vector_bytes
Create Date: 2026-12-07 11:40:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0020_memory_revision"
down_revision: str | None = "0019_memory_vector_bytes"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # A constant server default: existing rows read 0 without a rewrite on PostgreSQL (11+);
    # SQLite adds the column in place. The vector index's kept rows compare it (issue #47).
    with op.batch_alter_table("memory_item", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("revision", sa.Integer(), nullable=False, server_default=sa.text("0"))
        )


def downgrade() -> None:
    with op.batch_alter_table("memory_item", schema=None) as batch_op:
        batch_op.drop_column("revision")
