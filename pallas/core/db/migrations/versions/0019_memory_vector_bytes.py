"""memory vectors as float32 bytes: memory_item.embedding from a JSON list to LargeBinary

Revision ID: 0019_memory_vector_bytes
Revises: 0018_memory_embedding_model
Create Date: 2026-12-06 14:30:00.000000
"""

import math
import sys
from array import array
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0019_memory_vector_bytes"
down_revision: str | None = "0018_memory_embedding_model"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Rows converted per round trip: a JSON vector is ~4.3 KB, so a batch is a few MB in memory.
BATCH = 1_000

_item = sa.table(
    "memory_item",
    sa.column("id", sa.BigInteger),
    sa.column("embedding", sa.JSON),  # before the upgrade / after the downgrade
    sa.column("embedding_f32", sa.LargeBinary),  # the upgrade's new column
    sa.column("embedding_json", sa.JSON),  # the downgrade's new column
    sa.column("embedding_model", sa.String),
)


def _packed(vector: Any) -> bytes | None:
    """A JSON vector as float32 little-endian bytes (as `pallas.core.db.types.vector_bytes`,
    copied: a migration keeps the meaning it had when written); None when it is no vector."""
    if not isinstance(vector, list) or not vector:
        return None
    if not all(isinstance(v, int | float) and math.isfinite(v) for v in vector):
        return None
    try:
        packed = array("f", vector)
    except OverflowError:
        return None
    if sys.byteorder == "big":
        packed.byteswap()
    return packed.tobytes()


def _unpacked(data: bytes) -> list[float]:
    values = array("f")
    values.frombytes(bytes(data))
    if sys.byteorder == "big":
        values.byteswap()
    # 7 significant digits: a float32's precision, and the 4-decimal JSON it once was
    return [float(f"{v:.7g}") for v in values]


def _convert(source: sa.ColumnClause[Any], target: str, convert: Any) -> None:
    """`target` := convert(`source`) for every row with a vector, in batches by id. A stored
    value that is no vector loses its model tag too: the service re-embeds it."""
    bind = op.get_bind()
    last = -1
    while True:
        rows = bind.execute(
            sa.select(_item.c.id, source)
            .where(_item.c.id > last, source.is_not(None))
            .order_by(_item.c.id)
            .limit(BATCH)
        ).all()
        if not rows:
            return
        done, bad = [], []
        for row_id, value in rows:
            out = convert(value) if value is not None else None
            if out is None:
                bad.append(row_id)
            else:
                done.append({"row_id": row_id, "value": out})
        if done:
            bind.execute(
                sa.update(_item)
                .where(_item.c.id == sa.bindparam("row_id"))
                .values({target: sa.bindparam("value")}),
                done,
            )
        if bad:
            bind.execute(sa.update(_item).where(_item.c.id.in_(bad)).values(embedding_model=None))
        last = rows[-1][0]


def _swap(old: str, new: str) -> None:
    """Drop column `old` and give `new` its name. Batch mode: plain ALTERs on PostgreSQL, a
    table copy on SQLite, whose in-place DROP / RENAME COLUMN needs 3.35+ (Ubuntu 20.04's
    Python links 3.31)."""
    with op.batch_alter_table("memory_item") as batch:
        batch.drop_column(old)
        batch.alter_column(new, new_column_name=old)


def upgrade() -> None:
    # a new column filled in batches, then it takes the JSON one's place
    op.add_column("memory_item", sa.Column("embedding_f32", sa.LargeBinary(), nullable=True))
    _convert(_item.c.embedding, "embedding_f32", _packed)
    _swap("embedding", "embedding_f32")


def downgrade() -> None:
    op.add_column("memory_item", sa.Column("embedding_json", sa.JSON(), nullable=True))
    blob = sa.column("embedding", sa.LargeBinary)
    _convert(blob, "embedding_json", _unpacked)
    _swap("embedding", "embedding_json")
