"""several accounts in one group: one stored copy per line, a group's lines read by group

Revision ID: 0014_message_line_key
Revises: 0001
Create Date: 2026-12-04 10:30:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014_message_line_key"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = ("message_line_key",)
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # `line_key` (pallas.core.lines): the same for every account's copy of a member's line;
    # unique per group, so the second account's copy is refused as a duplicate. Reads of a
    # group's lines go by group (whichever account stored them): (group_id, time) replaces
    # (self_id, group_id, time); the unique (self_id, group_id, message_id) index keeps
    # serving the per-account reads (a quoted message id, a private chat).
    with op.batch_alter_table("message", schema=None) as batch_op:
        batch_op.add_column(sa.Column("line_key", sa.String(length=48), nullable=True))
        batch_op.create_index("uq_message_group_line", ["group_id", "line_key"], unique=True)
        batch_op.create_index("ix_message_group_time", ["group_id", "time"], unique=False)
        batch_op.drop_index("ix_message_scope_time")


def downgrade() -> None:
    with op.batch_alter_table("message", schema=None) as batch_op:
        batch_op.create_index(
            "ix_message_scope_time", ["self_id", "group_id", "time"], unique=False
        )
        batch_op.drop_index("ix_message_group_time")
        batch_op.drop_index("uq_message_group_line")
        batch_op.drop_column("line_key")
