"""group learning: reply pairs, labels, strategies, reply profile, cursors, feedback

Revision ID: 0004_learning
Revises: 0002
Create Date: 2026-11-30 10:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004_learning"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = ("learning",)
depends_on: str | Sequence[str] | None = None

_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _id() -> sa.Column:
    return sa.Column("id", _ID, autoincrement=True, nullable=False)


def _scope() -> list[sa.Column]:
    return [
        sa.Column("bot_id", sa.BigInteger(), nullable=False),
        sa.Column("group_id", sa.BigInteger(), nullable=False),
        sa.Column("scene", sa.String(length=32), nullable=False, server_default="group_chat"),
    ]


def upgrade() -> None:
    op.create_table(
        "learning_reply_pair",
        _id(),
        *_scope(),
        sa.Column("trigger_id", sa.BigInteger(), nullable=False),
        sa.Column("response_id", sa.BigInteger(), nullable=False),
        sa.Column("trigger_text", sa.Text(), nullable=False),
        sa.Column("response_text", sa.Text(), nullable=False),
        sa.Column("context_text", sa.Text(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("learning_type", sa.String(length=24), nullable=False),
        sa.Column("trigger_user", sa.BigInteger(), nullable=False),
        sa.Column("response_user", sa.BigInteger(), nullable=False),
        sa.Column("response_row_id", sa.BigInteger(), nullable=False),
        sa.Column("time", sa.Float(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint(
            "bot_id", "group_id", "scene", "trigger_id", "response_id", name="uq_learning_pair"
        ),
    )
    op.create_index(
        "ix_learning_pair_scope",
        "learning_reply_pair",
        ["bot_id", "group_id", "scene", "learning_type", "id"],
    )
    op.create_table(
        "learning_pair_label",
        _id(),
        *_scope(),
        sa.Column("trigger_id", sa.BigInteger(), nullable=False),
        sa.Column("response_id", sa.BigInteger(), nullable=False),
        sa.Column("learning_type", sa.String(length=24), nullable=False),
        sa.Column("situation", sa.String(length=64), nullable=False),
        sa.Column("interaction_action", sa.String(length=96), nullable=False),
        sa.Column("intensity", sa.Integer(), nullable=False),
        sa.Column("transferable", sa.Boolean(), nullable=False),
        sa.Column("outcome", sa.String(length=64), nullable=False),
        sa.Column("time", sa.Float(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint(
            "bot_id", "group_id", "scene", "trigger_id", "response_id", name="uq_learning_label"
        ),
    )
    op.create_index(
        "ix_learning_label_scope", "learning_pair_label", ["bot_id", "group_id", "scene", "id"]
    )
    op.create_table(
        "learning_behavior_strategy",
        _id(),
        *_scope(),
        sa.Column("learning_type", sa.String(length=24), nullable=False),
        sa.Column("situation", sa.String(length=64), nullable=False),
        sa.Column("action", sa.String(length=96), nullable=False),
        sa.Column("outcome", sa.String(length=64), nullable=False),
        sa.Column("support_count", sa.Integer(), nullable=False),
        sa.Column("score", sa.Float(), nullable=False),
        sa.Column("source_token", sa.String(length=128), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        "ix_learning_strategy_scope",
        "learning_behavior_strategy",
        ["bot_id", "group_id", "scene"],
    )
    op.create_table(
        "learning_reply_profile",
        _id(),
        *_scope(),
        sa.Column("sample_turns", sa.Integer(), nullable=False),
        sa.Column("sample_bubbles", sa.Integer(), nullable=False),
        sa.Column("bubbles_p50", sa.Float(), nullable=False),
        sa.Column("bubbles_p90", sa.Float(), nullable=False),
        sa.Column("chars_p50", sa.Float(), nullable=False),
        sa.Column("chars_p90", sa.Float(), nullable=False),
        sa.Column("single_bubble_share", sa.Float(), nullable=False),
        sa.Column("last_row_id", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("bot_id", "group_id", "scene", name="uq_learning_profile"),
    )
    op.create_table(
        "learning_cursor",
        _id(),
        *_scope(),
        sa.Column("last_row_id", sa.BigInteger(), nullable=False),
        sa.Column("budget_day", sa.String(length=10), nullable=False),
        sa.Column("calls_today", sa.Integer(), nullable=False),
        sa.Column("tokens_today", sa.BigInteger(), nullable=False),
        sa.Column("failures_at_cursor", sa.Integer(), nullable=False),
        sa.Column("pairs_total", sa.BigInteger(), nullable=False),
        sa.Column("labels_total", sa.BigInteger(), nullable=False),
        sa.Column("last_error", sa.String(length=64), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("bot_id", "group_id", "scene", name="uq_learning_cursor"),
    )
    op.create_table(
        "learning_sweep_state",
        sa.Column("name", sa.String(length=32), nullable=False),
        sa.Column("position_bot_id", sa.BigInteger(), nullable=True),
        sa.Column("position_group_id", sa.BigInteger(), nullable=True),
        sa.Column("sweeps", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )
    op.create_table(
        "learning_feedback_outcome",
        _id(),
        sa.Column("bot_id", sa.BigInteger(), nullable=False),
        sa.Column("group_id", sa.BigInteger(), nullable=False),
        sa.Column("bot_message_id", sa.BigInteger(), nullable=False),
        sa.Column("admin_id", sa.BigInteger(), nullable=False),
        sa.Column("word", sa.String(length=32), nullable=False),
        sa.Column("bot_text", sa.Text(), nullable=False),
        sa.Column("turn_id", sa.String(length=64), nullable=False),
        sa.Column("blames", sa.JSON(), nullable=False),
        sa.Column("ignored_sources", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("undone_at", sa.Float(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint(
            "bot_id", "group_id", "bot_message_id", "admin_id", name="uq_learning_feedback"
        ),
    )
    op.create_index(
        "ix_learning_feedback_scope", "learning_feedback_outcome", ["bot_id", "group_id", "id"]
    )


def downgrade() -> None:
    op.drop_index("ix_learning_feedback_scope", table_name="learning_feedback_outcome")
    op.drop_table("learning_feedback_outcome")
    op.drop_table("learning_sweep_state")
    op.drop_table("learning_cursor")
    op.drop_table("learning_reply_profile")
    op.drop_index("ix_learning_strategy_scope", table_name="learning_behavior_strategy")
    op.drop_table("learning_behavior_strategy")
    op.drop_index("ix_learning_label_scope", table_name="learning_pair_label")
    op.drop_table("learning_pair_label")
    op.drop_index("ix_learning_pair_scope", table_name="learning_reply_pair")
    op.drop_table("learning_reply_pair")
