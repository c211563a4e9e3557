"""member profile: a member's facts as the cheap model consolidated them

Revision ID: 0016_member_profile
Revises: 0002
Create Date: 2026-12-04 10:20:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016_member_profile"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = ("member_profile",)
depends_on: str | Sequence[str] | None = None

_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "member_profile",
        sa.Column("id", _ID, autoincrement=True, nullable=False),
        sa.Column("bot_id", sa.BigInteger(), nullable=False),
        sa.Column("scope", sa.String(length=96), nullable=False),
        sa.Column("subject_user_id", sa.BigInteger(), nullable=False),
        sa.Column("statements", sa.JSON(), nullable=False),
        sa.Column("basis", sa.JSON(), nullable=False),
        sa.Column("superseded", sa.JSON(), nullable=False),
        sa.Column("model", sa.String(length=128), nullable=False),
        sa.Column("tokens", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("member_profile", schema=None) as batch_op:
        batch_op.create_index("ix_member_profile_member", ["scope", "subject_user_id"], unique=True)


def downgrade() -> None:
    with op.batch_alter_table("member_profile", schema=None) as batch_op:
        batch_op.drop_index("ix_member_profile_member")
    op.drop_table("member_profile")
