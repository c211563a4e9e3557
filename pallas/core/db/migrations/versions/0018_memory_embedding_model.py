"""memory vectors name the model that made them: memory_item.embedding_model

Revision ID: 0018_memory_embedding_model
Revises: 0003_memory
Create Date: 2026-12-06 11:10:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0018_memory_embedding_model"
down_revision: str | None = "0003_memory"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Nullable, no default: no table rewrite on SQLite or PostgreSQL. Vectors stored before
    # this column existed keep NULL, i.e. "made by an unknown model": the memory service never
    # compares them with a known model's and re-embeds them in the background (issue #47).
    with op.batch_alter_table("memory_item", schema=None) as batch_op:
        batch_op.add_column(sa.Column("embedding_model", sa.String(length=128), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("memory_item", schema=None) as batch_op:
        batch_op.drop_column("embedding_model")
