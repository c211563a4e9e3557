"""console: a covering index for "messages / bot messages today per group"

Revision ID: 0011_console
Revises: 0002
Create Date: 2026-12-01 10:00:00.000000
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0011_console"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = ("console",)
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # the console's groups page counts today's rows per (bot, group): a range scan over `time`
    # that never touches the table (1,000,000 rows: only today's index entries are read)
    op.create_index("ix_message_time_scope", "message", ["time", "self_id", "group_id", "is_bot"])


def downgrade() -> None:
    op.drop_index("ix_message_time_scope", table_name="message")
