"""the plugin that sent a message: another NoneBot plugin's sends are not the persona's words

Revision ID: 0017_message_sent_by
Revises: 0014_message_line_key
Create Date: 2026-12-06 08:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017_message_sent_by"
down_revision: str | None = "0014_message_line_key"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # `sent_by`: for a message the account sent from another NoneBot plugin's matcher, that
    # plugin's id (`pallas.onebot.neighbours`); NULL for the persona's own lines, members'
    # lines and rows from before it existed. Nullable, no default: no table rewrite on either
    # SQLite or PostgreSQL.
    with op.batch_alter_table("message", schema=None) as batch_op:
        batch_op.add_column(sa.Column("sent_by", sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("message", schema=None) as batch_op:
        batch_op.drop_column("sent_by")
