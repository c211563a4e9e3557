"""usage ledger: the endpoint that answered, cached prompt tokens, reasoning tokens

Revision ID: 0012_provider_usage
Revises: 0002
Create Date: 2026-12-04 04:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012_provider_usage"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = ("provider_usage",)
depends_on: str | Sequence[str] | None = None

_OLD_KEY = ["day", "bot_id", "group_id", "task", "model"]


def upgrade() -> None:
    # existing rows were all answered by the one endpoint there was: the primary ("")
    with op.batch_alter_table("usage_ledger", schema=None) as batch_op:
        batch_op.add_column(sa.Column("endpoint", sa.String(32), nullable=False, server_default=""))
        batch_op.add_column(
            sa.Column("cached_tokens", sa.BigInteger(), nullable=False, server_default="0")
        )
        batch_op.add_column(
            sa.Column("reasoning_tokens", sa.BigInteger(), nullable=False, server_default="0")
        )
        batch_op.drop_constraint("uq_usage_key", type_="unique")
        batch_op.create_unique_constraint("uq_usage_key", [*_OLD_KEY, "endpoint"])


def downgrade() -> None:
    with op.batch_alter_table("usage_ledger", schema=None) as batch_op:
        batch_op.drop_constraint("uq_usage_key", type_="unique")
        batch_op.create_unique_constraint("uq_usage_key", _OLD_KEY)
        batch_op.drop_column("reasoning_tokens")
        batch_op.drop_column("cached_tokens")
        batch_op.drop_column("endpoint")
