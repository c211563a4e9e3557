"""The `memory_item` table: write with dedupe / replacement, load candidates, touch, forget.

Every query names its scopes explicitly; there is no "read everything" path for the product
(only the operator CLI lists across scopes). Soft-deleted rows are invisible to candidate
loading. The caller (the memory service) normalises keys and fingerprints; this module only
stores and compares them.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from dataclasses import replace
from sys import intern
from typing import Any

from sqlalchemy import (
    ColumnElement,
    LargeBinary,
    Select,
    Text,
    func,
    or_,
    select,
    type_coerce,
    union_all,
    update,
)
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

import pallas.core.db.models_memory  # noqa: F401  (registers memory_item on Base)
from pallas.core.db.engine import rowcount
from pallas.core.db.models_memory import MemoryItemRow
from pallas.core.db.types import storable_text, vector_from_bytes
from pallas.features.memory.records import MemoryItem, NewMemory, WriteAction, WriteOutcome

MAX_TEXT_CHARS = 1000


_c = MemoryItemRow.__table__.c
# The reply path's candidate reads: Core rows in `MemoryItem`'s field order, the JSON columns
# as their stored text (decoded by `_item_from_row`, with the common empty values short-cut)
_ITEM_COLUMNS = (
    *(_c.id, _c.bot_id, _c.scope, _c.kind, _c.key, _c.text, _c.origin),
    *(_c.created_at, _c.updated_at, _c.subject_user_id, _c.author_user_id),
    *(_c.subject_name, _c.fingerprint),
    type_coerce(_c.source, Text).label("source"),
    *(_c.last_access_at, _c.access_count, _c.deleted_at, _c.delete_reason, _c.replaced_by),
    *(_c.embedding_model, _c.revision),
)
# a vector as stored: float32 little-endian bytes (not the column type's decoded list)
_RAW_VECTOR = type_coerce(_c.embedding, LargeBinary)
_ITEM_FIELDS = tuple(c.key for c in _ITEM_COLUMNS)  # the same values by name, of an ORM row
_EMPTY_JSON = frozenset({"{}", "null", "[]", ""})


def _to_item(row: MemoryItemRow) -> MemoryItem:
    """An ORM row as a record (its JSON columns already decoded)."""
    return _item_from_row([getattr(row, name) for name in _ITEM_FIELDS])


def _item_from_row(row: Sequence[Any]) -> MemoryItem:
    """A row of `_ITEM_COLUMNS` as a record, by position (a few hundred a cold load). The
    strings many rows repeat (scope, kind, origin, model) are interned: the rows kept beside
    a vector index hold one copy of each (~130 bytes a row less)."""
    return MemoryItem(
        id=row[0],
        bot_id=row[1],
        scope=intern(row[2]),
        kind=intern(row[3]),
        key=row[4],
        text=row[5],
        origin=intern(row[6]),
        created_at=row[7],
        updated_at=row[8],
        subject_user_id=row[9],
        author_user_id=row[10],
        subject_name=row[11] or "",
        fingerprint=row[12],
        source=dict(_json(row[13]) or {}),
        last_access_at=row[14],
        access_count=row[15] or 0,
        deleted_at=row[16],
        delete_reason=row[17],
        replaced_by=row[18],
        embedding_model=intern(row[19]) if row[19] is not None else None,
        revision=row[20] or 0,
    )


def _json(raw: Any) -> Any:
    """A JSON column read as text (SQLite, asyncpg) or already decoded (another driver)."""
    if not isinstance(raw, str):
        return raw
    return None if raw in _EMPTY_JSON else json.loads(raw)


def _recency(item: MemoryItem) -> float:
    """`coalesce(last_access_at, updated_at)`, the candidates' newest-use-first order."""
    return item.last_access_at if item.last_access_at is not None else item.updated_at


def _as_stored(new: NewMemory) -> NewMemory:
    """`new` as the row will hold it (cleaned text, column lengths), so that the Python-side
    dedupe comparisons and the returned item agree with what the database stores."""
    return replace(
        new,
        scope=storable_text(new.scope),
        kind=storable_text(new.kind),
        key=storable_text(new.key)[:128],
        fingerprint=storable_text(new.fingerprint)[:255],
        text=storable_text(new.text)[:MAX_TEXT_CHARS],
        origin=storable_text(new.origin)[:16],
        subject_name=storable_text(new.subject_name)[:64],
    )


def _same_subject(subject_user_id: int | None) -> Any:
    column = MemoryItemRow.subject_user_id
    return column.is_(None) if subject_user_id is None else column == subject_user_id


def _merge_source(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """A duplicate write keeps the first source and adds the new message ids (capped)."""
    merged = dict(old)
    ids = list(old.get("message_ids", []))
    for mid in new.get("message_ids", []):
        if mid not in ids:
            ids.append(mid)
    if ids:
        merged["message_ids"] = ids[-20:]
    return merged


class MemoryRepository:
    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self._sessions = sessions

    # ------------------------------------------------------------------ writes

    async def upsert(self, new: NewMemory) -> WriteOutcome:
        """Insert `new`, deduping against live rows of the same scope × kind × subject.

        Same fingerprint (normalised text) → duplicate: the old row is kept, its `updated_at`
        and source message ids refreshed. Same key with different text → the older rows are
        soft-deleted as `replaced` (newer replaces older) and the new row is inserted.
        """
        new = _as_stored(new)
        async with self._sessions() as session, session.begin():
            live = await self._live_matches(session, new)
            for row in live:
                if row.fingerprint == new.fingerprint:
                    row.updated_at = new.now
                    row.source = _merge_source(dict(row.source or {}), new.source)
                    row.revision = (row.revision or 0) + 1
                    await session.flush()
                    return WriteOutcome("duplicate", _to_item(row))
            row = MemoryItemRow(
                bot_id=new.bot_id,
                scope=new.scope,
                kind=new.kind,
                subject_user_id=new.subject_user_id,
                author_user_id=new.author_user_id,
                subject_name=new.subject_name[:64],
                key=new.key[:128],
                fingerprint=new.fingerprint[:255],
                text=new.text[:MAX_TEXT_CHARS],
                origin=new.origin[:16],
                source=dict(new.source),
                embedding=list(new.embedding) if new.embedding else None,
                embedding_model=new.embedding_model if new.embedding else None,
                created_at=new.now,
                updated_at=new.now,
                access_count=0,
            )
            session.add(row)
            await session.flush()
            replaced = [old for old in live if old.key == new.key[:128]]
            for old in replaced:
                old.deleted_at = new.now
                old.delete_reason = "replaced"
                old.replaced_by = row.id
            action: WriteAction = "replaced" if replaced else "added"
            return WriteOutcome(action, _to_item(row), tuple(old.id for old in replaced))

    async def _live_matches(self, session: AsyncSession, new: NewMemory) -> list[MemoryItemRow]:
        stmt = select(MemoryItemRow).where(
            MemoryItemRow.scope == new.scope,
            MemoryItemRow.kind == new.kind,
            _same_subject(new.subject_user_id),
            MemoryItemRow.deleted_at.is_(None),
            or_(
                MemoryItemRow.key == new.key[:128],
                MemoryItemRow.fingerprint == new.fingerprint[:255],
            ),
        )
        return list((await session.scalars(stmt)).all())

    async def set_embedding(
        self, item_id: int, vector: Sequence[float], model: str | None = None
    ) -> None:
        """Store a row's vector with the model that made it (None: unknown, re-embedded)."""
        async with self._sessions() as session, session.begin():
            await session.execute(
                update(MemoryItemRow)
                .where(MemoryItemRow.id == item_id)
                .values(embedding=[float(v) for v in vector], embedding_model=model)
            )

    async def set_expansion(self, item_id: int, expansion: dict[str, Any]) -> bool:
        """Store the index-time expansion in a live row's source; False when the row is gone."""
        async with self._sessions() as session, session.begin():
            row = await session.get(MemoryItemRow, item_id)
            if row is None or row.deleted_at is not None:
                return False
            row.source = {**dict(row.source or {}), "expansion": dict(expansion)}
            row.revision = (row.revision or 0) + 1
            await session.flush()
            return True

    async def touch(self, item_ids: Collection[int], now: float) -> int:
        """One UPDATE for every item a turn used: access count + 1, last access = now."""
        if not item_ids:
            return 0
        async with self._sessions() as session, session.begin():
            result = await session.execute(
                update(MemoryItemRow)
                .where(MemoryItemRow.id.in_(sorted(set(item_ids))))
                .values(
                    access_count=MemoryItemRow.access_count + 1,
                    last_access_at=now,
                )
            )
        return max(rowcount(result), 0)

    async def soft_delete(
        self,
        item_ids: Collection[int],
        *,
        now: float,
        reason: str,
        scopes: Collection[str] | None = None,
    ) -> list[MemoryItem]:
        """Soft-delete live items by id; with `scopes`, only items inside them. Returns them."""
        if not item_ids:
            return []
        stmt = select(MemoryItemRow).where(
            MemoryItemRow.id.in_(sorted(set(item_ids))), MemoryItemRow.deleted_at.is_(None)
        )
        if scopes is not None:
            stmt = stmt.where(MemoryItemRow.scope.in_(sorted(scopes)))
        return await self._delete_where(stmt, now=now, reason=reason)

    async def retire(
        self,
        item_ids: Collection[int],
        *,
        now: float,
        reason: str,
        replaced_by: int,
        denial: bool = False,
    ) -> list[MemoryItem]:
        """Soft-delete live items superseded by `replaced_by` (kept as history, never read).

        With `denial`, `replaced_by` is a bare negation ("我已经不养猫了") kept only as history:
        it is soft-deleted as ``denial`` in the same transaction when anything was retired, so
        no reader ever sees it live between the two writes."""
        if not item_ids:
            return []
        async with self._sessions() as session, session.begin():
            stmt = select(MemoryItemRow).where(
                MemoryItemRow.id.in_(sorted(set(item_ids))), MemoryItemRow.deleted_at.is_(None)
            )
            rows = list((await session.scalars(stmt)).all())
            for row in rows:
                row.deleted_at = now
                row.delete_reason = reason[:32]
                row.replaced_by = replaced_by
            if denial and rows:
                await session.execute(
                    update(MemoryItemRow)
                    .where(MemoryItemRow.id == replaced_by, MemoryItemRow.deleted_at.is_(None))
                    .values(deleted_at=now, delete_reason="denial")
                )
            await session.flush()
            return [_to_item(r) for r in rows]

    async def recently_deleted(
        self,
        scope: str,
        subject_user_id: int,
        *,
        reasons: Collection[str],
        since: float,
        reason_prefixes: Collection[str] = (),
    ) -> list[MemoryItem]:
        """The subject's items in `scope` soft-deleted at or after `since` for one of `reasons`
        (or a reason starting with one of `reason_prefixes`), newest deletion first."""
        wanted: list[ColumnElement[bool]] = [MemoryItemRow.delete_reason.in_(sorted(reasons))]
        wanted += [MemoryItemRow.delete_reason.startswith(p) for p in sorted(reason_prefixes)]
        stmt = (
            select(MemoryItemRow)
            .where(
                MemoryItemRow.scope == scope,
                MemoryItemRow.subject_user_id == subject_user_id,
                MemoryItemRow.deleted_at >= since,
                or_(*wanted),
            )
            .order_by(MemoryItemRow.deleted_at.desc(), MemoryItemRow.id.desc())
        )
        async with self._sessions() as session:
            return [_to_item(r) for r in (await session.scalars(stmt)).all()]

    async def restore(self, item_ids: Collection[int], *, scope: str) -> list[MemoryItem]:
        """Make soft-deleted items of `scope` live again (an undo), unless a live row of the
        same scope, kind and subject already says the same (same fingerprint). Returns them."""
        if not item_ids:
            return []
        async with self._sessions() as session, session.begin():
            stmt = select(MemoryItemRow).where(
                MemoryItemRow.id.in_(sorted(set(item_ids))),
                MemoryItemRow.scope == scope,
                MemoryItemRow.deleted_at.is_not(None),
            )
            restored: list[MemoryItemRow] = []
            for row in (await session.scalars(stmt)).all():
                same = select(func.count()).where(
                    MemoryItemRow.scope == row.scope,
                    MemoryItemRow.kind == row.kind,
                    _same_subject(row.subject_user_id),
                    MemoryItemRow.fingerprint == row.fingerprint,
                    MemoryItemRow.deleted_at.is_(None),
                )
                if int((await session.execute(same)).scalar_one()):
                    continue
                row.deleted_at = None
                row.delete_reason = None
                row.replaced_by = None
                restored.append(row)
            await session.flush()
            return [_to_item(r) for r in restored]

    async def forget_subject(
        self,
        user_id: int,
        *,
        now: float,
        kinds: Collection[str],
        scopes: Collection[str] | None = None,
        bot_id: int | None = None,
    ) -> list[MemoryItem]:
        """Soft-delete every live item about `user_id` of the given kinds (in `scopes`)."""
        stmt = select(MemoryItemRow).where(
            MemoryItemRow.subject_user_id == user_id,
            MemoryItemRow.kind.in_(sorted(kinds)),
            MemoryItemRow.deleted_at.is_(None),
        )
        if scopes is not None:
            stmt = stmt.where(MemoryItemRow.scope.in_(sorted(scopes)))
        if bot_id is not None:
            stmt = stmt.where(MemoryItemRow.bot_id == bot_id)
        return await self._delete_where(stmt, now=now, reason="forget_me")

    async def _delete_where(
        self, stmt: Select[Any], *, now: float, reason: str
    ) -> list[MemoryItem]:
        async with self._sessions() as session, session.begin():
            rows = list((await session.scalars(stmt)).all())
            for row in rows:
                row.deleted_at = now
                row.delete_reason = reason[:32]
            await session.flush()
            return [_to_item(r) for r in rows]

    # ------------------------------------------------------------------ reads

    async def candidates(
        self,
        scopes: Collection[str],
        kind: str,
        *,
        subject_user_id: int | None = None,
        limit: int = 500,
    ) -> list[MemoryItem]:
        """Live items of one kind in `scopes` (about one subject, when given).

        Capped at `limit`, most recently used / written first, so a huge store still loads in
        one indexed query.
        """
        if not scopes or limit <= 0:
            return []
        stmt = select(*_ITEM_COLUMNS).where(  # Core rows: no ORM instances on the reply path
            MemoryItemRow.scope.in_(sorted(scopes)),
            MemoryItemRow.kind == kind,
            MemoryItemRow.deleted_at.is_(None),
        )
        if subject_user_id is not None:
            stmt = stmt.where(MemoryItemRow.subject_user_id == subject_user_id)
        recency = func.coalesce(MemoryItemRow.last_access_at, MemoryItemRow.updated_at)
        stmt = stmt.order_by(recency.desc(), MemoryItemRow.id.desc()).limit(limit)
        async with self._sessions() as session:
            return [_item_from_row(r) for r in (await session.execute(stmt)).all()]

    async def candidates_by_kind(
        self, scopes: Collection[str], kinds: Sequence[str], *, limit: int = 500
    ) -> dict[str, list[MemoryItem]]:
        """`candidates(scopes, kind, limit=limit)` of several kinds (no subject filter) in one
        statement: a UNION ALL of the per-kind capped reads, each kind in the same order."""
        out: dict[str, list[MemoryItem]] = {kind: [] for kind in kinds}
        if not scopes or limit <= 0 or not kinds:
            return out
        recency = func.coalesce(MemoryItemRow.last_access_at, MemoryItemRow.updated_at)
        parts = [
            select(
                select(*_ITEM_COLUMNS)
                .where(
                    MemoryItemRow.scope.in_(sorted(scopes)),
                    MemoryItemRow.kind == kind,
                    MemoryItemRow.deleted_at.is_(None),
                )
                .order_by(recency.desc(), MemoryItemRow.id.desc())
                .limit(limit)
                .subquery()
            )
            for kind in dict.fromkeys(kinds)
        ]
        stmt = select(union_all(*parts).subquery())  # Core rows, as `candidates`
        async with self._sessions() as session:
            items = [_item_from_row(r) for r in (await session.execute(stmt)).all()]
        # the union's row order is not guaranteed: the per-kind order again, in Python
        items.sort(key=lambda i: (-_recency(i), -i.id))
        for item in items:
            out[item.kind].append(item)
        return out

    async def subjects(self, scopes: Collection[str], kinds: Collection[str]) -> frozenset[int]:
        """The subject user ids of the live rows of `kinds` in `scopes`."""
        if not scopes or not kinds:
            return frozenset()
        stmt = (
            select(MemoryItemRow.subject_user_id)
            .where(
                MemoryItemRow.scope.in_(sorted(scopes)),
                MemoryItemRow.kind.in_(sorted(kinds)),
                MemoryItemRow.subject_user_id.is_not(None),
                MemoryItemRow.deleted_at.is_(None),
            )
            .distinct()
        )
        async with self._sessions() as session:
            rows = (await session.scalars(stmt)).all()
        return frozenset(int(u) for u in rows if u is not None)

    async def live_revisions(self, scope: str, kind: str) -> dict[int, int]:
        """The live rows of one scope × kind, id → revision (the vector index keeps only
        these, and re-reads a kept row whose revision moved)."""
        stmt = select(MemoryItemRow.id, MemoryItemRow.revision).where(
            MemoryItemRow.scope == scope,
            MemoryItemRow.kind == kind,
            MemoryItemRow.deleted_at.is_(None),
        )
        async with self._sessions() as session:
            return {int(i): int(r or 0) for i, r in (await session.execute(stmt)).all()}

    async def vectors(
        self, item_ids: Collection[int], *, model: str | None = None, batch: int = 500
    ) -> list[tuple[int, int | None, list[float]]]:
        """(id, subject, embedding) of the given rows that have an embedding — made by `model`
        only, when it is given (vectors of two models are never compared)."""
        columns = (_c.id, _c.subject_user_id, _RAW_VECTOR)
        where = () if model is None else (_c.embedding_model == model,)
        rows = await self._with_vector(item_ids, columns, where, batch)
        return [(int(r[0]), r[1], vector_from_bytes(bytes(r[2]))) for r in rows]

    async def vector_rows(
        self, item_ids: Collection[int], *, model: str, batch: int = 500
    ) -> list[tuple[MemoryItem, bytes]]:
        """The live rows among `item_ids` with a vector made by `model`, each with that vector
        as stored (float32 little-endian bytes, decoded by the index in one numpy pass):
        what joins a vector index (the index keeps the row beside its vector, so the reply
        path reads no row it finds)."""
        where = (_c.deleted_at.is_(None), _c.embedding_model == model)
        rows = await self._with_vector(item_ids, (*_ITEM_COLUMNS, _RAW_VECTOR), where, batch)
        return [(_item_from_row(r), bytes(r[-1])) for r in rows]

    async def _with_vector(
        self,
        item_ids: Collection[int],
        columns: Sequence[Any],
        where: Sequence[ColumnElement[bool]],
        batch: int,
    ) -> list[Any]:
        """`columns` (the stored vector last) of the rows among `item_ids` matching `where`
        that have a vector, one query per `batch` ids."""
        ids = sorted(set(item_ids))
        out: list[Any] = []
        async with self._sessions() as session:
            for start in range(0, len(ids), batch):
                stmt = select(*columns).where(_c.id.in_(ids[start : start + batch]), *where)
                out += [r for r in (await session.execute(stmt)).all() if r[-1]]
        return out

    async def needing_vectors(
        self, scope: str, kind: str, model: str, *, limit: int
    ) -> list[tuple[int, str]]:
        """(id, text) of up to `limit` live rows of one scope × kind without a vector made by
        `model` (none yet, another model's, or an unknown model's), oldest id first."""
        stmt = (
            select(MemoryItemRow.id, MemoryItemRow.text)
            .where(
                MemoryItemRow.scope == scope,
                MemoryItemRow.kind == kind,
                MemoryItemRow.deleted_at.is_(None),
                or_(
                    MemoryItemRow.embedding_model.is_(None),
                    MemoryItemRow.embedding_model != model,
                ),
            )
            .order_by(MemoryItemRow.id)
            .limit(limit)
        )
        async with self._sessions() as session:
            return [(int(i), str(t)) for i, t in (await session.execute(stmt)).all()]

    async def get_many(self, item_ids: Collection[int]) -> list[MemoryItem]:
        """Live rows by id (any order); Core rows like the candidates' (the vector index's
        hits on the reply path: no ORM instances, no vector decoded)."""
        if not item_ids:
            return []
        stmt = select(*_ITEM_COLUMNS).where(
            _c.id.in_(sorted(set(item_ids))), _c.deleted_at.is_(None)
        )
        async with self._sessions() as session:
            return [_item_from_row(r) for r in (await session.execute(stmt)).all()]

    async def get(self, item_id: int) -> MemoryItem | None:
        async with self._sessions() as session:
            row = await session.get(MemoryItemRow, item_id)
        return _to_item(row) if row is not None else None

    async def list_items(
        self,
        *,
        scopes: Collection[str] | None = None,
        bot_id: int | None = None,
        kind: str | None = None,
        subject_user_id: int | None = None,
        include_deleted: bool = False,
        replaced_only: bool = False,
        limit: int = 50,
    ) -> list[MemoryItem]:
        """Newest first, for admin listings (`scopes=None` only from the operator CLI).

        `replaced_only`: the facts a newer one retired (`replaced_by` set), newest first."""
        stmt = select(MemoryItemRow)
        if scopes is not None:
            stmt = stmt.where(MemoryItemRow.scope.in_(sorted(scopes)))
        if bot_id is not None:
            stmt = stmt.where(MemoryItemRow.bot_id == bot_id)
        if kind is not None:
            stmt = stmt.where(MemoryItemRow.kind == kind)
        if subject_user_id is not None:
            stmt = stmt.where(MemoryItemRow.subject_user_id == subject_user_id)
        if replaced_only:
            stmt = stmt.where(MemoryItemRow.replaced_by.is_not(None))
        elif not include_deleted:
            stmt = stmt.where(MemoryItemRow.deleted_at.is_(None))
        stmt = stmt.order_by(MemoryItemRow.id.desc()).limit(max(1, limit))
        async with self._sessions() as session:
            return [_to_item(r) for r in (await session.scalars(stmt)).all()]

    async def count_live(self, scopes: Collection[str], kind: str | None = None) -> int:
        stmt = (
            select(func.count())
            .select_from(MemoryItemRow)
            .where(MemoryItemRow.scope.in_(sorted(scopes)), MemoryItemRow.deleted_at.is_(None))
        )
        if kind is not None:
            stmt = stmt.where(MemoryItemRow.kind == kind)
        async with self._sessions() as session:
            return int((await session.execute(stmt)).scalar_one())
