"""The consolidated profiles (`member_profile`): one row per member and scope.

A row is replaced on every consolidation; "forget me" deletes it with the member's facts. Reads
are cached per (scope, member, write generation of the scope): a new fact, a retirement or a
new profile bumps the generation, so the cache never serves a profile older than the facts.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from pallas.core.db.models_memory import MemberProfileRow

CACHE_ENTRIES = 1024


@dataclass(frozen=True, slots=True)
class Statement:
    text: str  # one merged statement, as stored and shown ("TA在字节做产品经理")
    item_ids: tuple[int, ...]  # the live facts it came from
    told: bool = False  # every fact behind it was taught by the member (记住 …)

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "ids": list(self.item_ids), "told": self.told}


@dataclass(frozen=True, slots=True)
class StoredProfile:
    scope: str
    subject_user_id: int
    statements: tuple[Statement, ...]
    basis: tuple[int, ...]  # the live fact ids it stands for, sorted
    superseded: tuple[int, ...]
    model: str
    tokens: int
    created_at: float


def _statement(raw: object) -> Statement | None:
    if not isinstance(raw, dict) or not isinstance(raw.get("text"), str):
        return None
    ids = tuple(int(i) for i in raw.get("ids") or () if isinstance(i, int))
    return Statement(raw["text"], ids, bool(raw.get("told")))


def _to_profile(row: MemberProfileRow) -> StoredProfile:
    statements = tuple(s for s in map(_statement, row.statements or ()) if s is not None)
    return StoredProfile(
        row.scope, row.subject_user_id, statements,
        tuple(int(i) for i in row.basis or ()), tuple(int(i) for i in row.superseded or ()),
        row.model, row.tokens, row.created_at,
    )  # fmt: skip


class ProfileRepository:
    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self._sessions = sessions
        self._cache: dict[tuple[str, int, str], StoredProfile | None] = {}

    async def get(self, scope: str, subject_user_id: int, *, gen: str = "") -> StoredProfile | None:
        key = (scope, subject_user_id, gen)
        if gen and key in self._cache:
            return self._cache[key]
        async with self._sessions() as session:
            row = await session.scalar(
                select(MemberProfileRow).where(
                    MemberProfileRow.scope == scope,
                    MemberProfileRow.subject_user_id == subject_user_id,
                )
            )
            found = _to_profile(row) if row is not None else None
        if gen:
            if len(self._cache) >= CACHE_ENTRIES:
                self._cache.clear()
            self._cache[key] = found
        return found

    async def put(
        self,
        *,
        bot_id: int,
        scope: str,
        subject_user_id: int,
        statements: Sequence[Statement],
        basis: Sequence[int],
        superseded: Sequence[int],
        model: str,
        tokens: int,
        now: float,
    ) -> None:
        async with self._sessions() as session, session.begin():
            await session.execute(
                delete(MemberProfileRow).where(
                    MemberProfileRow.scope == scope,
                    MemberProfileRow.subject_user_id == subject_user_id,
                )
            )
            session.add(
                MemberProfileRow(
                    bot_id=bot_id, scope=scope, subject_user_id=subject_user_id,
                    statements=[s.to_json() for s in statements], basis=sorted(basis),
                    superseded=list(superseded), model=model[:128], tokens=tokens,
                    created_at=now,
                )
            )  # fmt: skip
        self._cache.clear()

    async def forget(self, subject_user_id: int, scopes: Collection[str] | None) -> int:
        """Delete the member's profiles (in `scopes`, or everywhere); how many went."""
        stmt = delete(MemberProfileRow).where(MemberProfileRow.subject_user_id == subject_user_id)
        if scopes is not None:
            stmt = stmt.where(MemberProfileRow.scope.in_(sorted(scopes)))
        async with self._sessions() as session, session.begin():
            result = await session.execute(stmt)
        self._cache.clear()
        return int(getattr(result, "rowcount", 0) or 0)
