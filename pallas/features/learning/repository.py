"""Group learning storage: reply pairs, labels, strategies, reply profile (+ sweep cursors,
inherited from `learning_cursors.LearningCursorRepository`).

Every query is keyed by bot × group × scene, so one group's style can never be read while
serving another. Pairs and labels are idempotent by (trigger id, response id): a sweep that is
re-run after a crash stores nothing twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from pallas.core.db.engine import rowcount
from pallas.core.db.models_learning import (
    DEFAULT_SCENE,
    LearningPairLabelRow,
    LearningReplyPairRow,
    LearningReplyProfileRow,
    LearningStrategyRow,
)
from pallas.core.learning_records import (
    BehaviorStrategy,
    GroupReplyProfile,
    LearningType,
    PairKind,
    PairLabel,
    ReplyPair,
)
from pallas.features.learning.cursors_repository import (
    CursorState,
    GroupKey,
    LearningCursorRepository,
    dialect_insert,
)

__all__ = ["CursorState", "GroupKey", "LearningCounts", "LearningRepository", "StoredProfile"]

_CHUNK = 200


@dataclass(frozen=True, slots=True)
class StoredProfile:
    profile: GroupReplyProfile
    last_row_id: int
    updated_at: float


@dataclass(frozen=True, slots=True)
class LearningCounts:
    observed_pairs: int
    reflection_pairs: int
    labels: int
    strategies: int


def _pair_values(pair: ReplyPair, scene: str, now: float) -> dict[str, Any]:
    return {
        "bot_id": pair.bot_id,
        "group_id": pair.group_id,
        "scene": scene,
        "trigger_id": pair.trigger_id,
        "response_id": pair.response_id,
        "trigger_text": pair.trigger_text,
        "response_text": pair.response_text,
        "context_text": pair.context_text,
        "kind": pair.kind.value,
        "learning_type": pair.learning_type.value,
        "trigger_user": pair.trigger_user,
        "response_user": pair.response_user,
        "response_row_id": pair.response_row_id,
        "time": pair.time,
        "created_at": now,
    }


def _to_pair(row: LearningReplyPairRow) -> ReplyPair:
    return ReplyPair(
        trigger_id=row.trigger_id,
        response_id=row.response_id,
        trigger_text=row.trigger_text,
        response_text=row.response_text,
        kind=PairKind(row.kind),
        trigger_user=row.trigger_user,
        response_user=row.response_user,
        time=row.time,
        learning_type=LearningType(row.learning_type),
        bot_id=row.bot_id,
        group_id=row.group_id,
        response_row_id=row.response_row_id,
        context_text=row.context_text,
    )


def _label_values(label: PairLabel, scene: str, now: float) -> dict[str, Any]:
    return {
        "bot_id": label.bot_id,
        "group_id": label.group_id,
        "scene": scene,
        "trigger_id": label.trigger_id,
        "response_id": label.response_id,
        "learning_type": label.learning_type.value,
        "situation": label.situation[:64],
        "interaction_action": label.interaction_action[:96],
        "intensity": label.intensity,
        "transferable": label.transferable,
        "outcome": label.outcome[:64],
        "time": label.time,
        "created_at": now,
    }


def _to_label(row: LearningPairLabelRow) -> PairLabel:
    return PairLabel(
        trigger_id=row.trigger_id,
        response_id=row.response_id,
        learning_type=LearningType(row.learning_type),
        situation=row.situation,
        interaction_action=row.interaction_action,
        intensity=row.intensity,
        transferable=row.transferable,
        outcome=row.outcome,
        time=row.time,
        bot_id=row.bot_id,
        group_id=row.group_id,
    )


def _to_strategy(row: LearningStrategyRow) -> BehaviorStrategy:
    return BehaviorStrategy(
        situation=row.situation,
        action=row.action,
        outcome=row.outcome,
        learning_type=LearningType(row.learning_type),
        support_count=row.support_count,
        score=row.score,
        bot_id=row.bot_id,
        group_id=row.group_id,
    )


class LearningRepository(LearningCursorRepository):
    # -- pairs and labels ----------------------------------------------------------------------
    async def add_pairs(
        self, pairs: Sequence[ReplyPair], *, now: float, scene: str = DEFAULT_SCENE
    ) -> int:
        """Insert pairs, ignoring ones already stored. Returns how many were new."""
        values = [_pair_values(p, scene, now) for p in pairs]
        return await self._insert_ignore(LearningReplyPairRow, values)

    async def add_labels(
        self, labels: Sequence[PairLabel], *, now: float, scene: str = DEFAULT_SCENE
    ) -> int:
        """Insert labels; a pair labelled again keeps its first label."""
        values = [_label_values(label, scene, now) for label in labels]
        return await self._insert_ignore(LearningPairLabelRow, values)

    async def _insert_ignore(self, model: Any, values: list[dict[str, Any]]) -> int:
        if not values:
            return 0
        index = ["bot_id", "group_id", "scene", "trigger_id", "response_id"]
        inserted = 0
        async with self._sessions() as session:
            insert = dialect_insert(session)
            for start in range(0, len(values), _CHUNK):
                stmt = (
                    insert(model)
                    .values(values[start : start + _CHUNK])
                    .on_conflict_do_nothing(index_elements=index)
                )
                result = await session.execute(stmt)
                inserted += max(rowcount(result), 0)
            await session.commit()
        return inserted

    async def pairs(
        self,
        bot_id: int,
        group_id: int,
        *,
        learning_type: LearningType | None = LearningType.OBSERVED,
        limit: int = 2000,
        scene: str = DEFAULT_SCENE,
    ) -> list[ReplyPair]:
        """The newest `limit` pairs of one bot × group (oldest first)."""
        stmt = select(LearningReplyPairRow).where(
            LearningReplyPairRow.bot_id == bot_id,
            LearningReplyPairRow.group_id == group_id,
            LearningReplyPairRow.scene == scene,
        )
        if learning_type is not None:
            stmt = stmt.where(LearningReplyPairRow.learning_type == learning_type.value)
        stmt = stmt.order_by(LearningReplyPairRow.id.desc()).limit(limit)
        async with self._sessions() as session:
            rows = (await session.scalars(stmt)).all()
        return [_to_pair(r) for r in reversed(rows)]

    async def pairs_by_keys(
        self, bot_id: int, group_id: int, keys: Sequence[tuple[int, int]], *, scene: str = "%"
    ) -> dict[tuple[int, int], ReplyPair]:
        if not keys:
            return {}
        responses = sorted({response for _, response in keys})
        stmt = select(LearningReplyPairRow).where(
            LearningReplyPairRow.bot_id == bot_id,
            LearningReplyPairRow.group_id == group_id,
            LearningReplyPairRow.response_id.in_(responses),
        )
        if scene != "%":
            stmt = stmt.where(LearningReplyPairRow.scene == scene)
        async with self._sessions() as session:
            rows = (await session.scalars(stmt)).all()
        wanted = set(keys)
        found = (_to_pair(r) for r in rows)
        return {p.key: p for p in found if p.key in wanted}

    async def labels(
        self, bot_id: int, group_id: int, *, limit: int = 4000, scene: str = DEFAULT_SCENE
    ) -> list[PairLabel]:
        stmt = (
            select(LearningPairLabelRow)
            .where(
                LearningPairLabelRow.bot_id == bot_id,
                LearningPairLabelRow.group_id == group_id,
                LearningPairLabelRow.scene == scene,
            )
            .order_by(LearningPairLabelRow.id.desc())
            .limit(limit)
        )
        async with self._sessions() as session:
            rows = (await session.scalars(stmt)).all()
        return [_to_label(r) for r in reversed(rows)]

    # -- strategies and profile ----------------------------------------------------------------
    async def replace_strategies(
        self,
        bot_id: int,
        group_id: int,
        strategies: Sequence[BehaviorStrategy],
        *,
        now: float,
        scene: str = DEFAULT_SCENE,
    ) -> None:
        rows = [
            LearningStrategyRow(
                bot_id=bot_id,
                group_id=group_id,
                scene=scene,
                learning_type=s.learning_type.value,
                situation=s.situation[:64],
                action=s.action[:96],
                outcome=s.outcome[:64],
                support_count=s.support_count,
                score=s.score,
                source_token=s.source_token[:128],
                updated_at=now,
            )
            for s in strategies
            if s.bot_id == bot_id and s.group_id == group_id
        ]
        async with self._sessions() as session, session.begin():
            await session.execute(
                delete(LearningStrategyRow).where(
                    LearningStrategyRow.bot_id == bot_id,
                    LearningStrategyRow.group_id == group_id,
                    LearningStrategyRow.scene == scene,
                )
            )
            session.add_all(rows)

    async def strategies(
        self, bot_id: int, group_id: int, *, scene: str = DEFAULT_SCENE
    ) -> list[BehaviorStrategy]:
        stmt = (
            select(LearningStrategyRow)
            .where(
                LearningStrategyRow.bot_id == bot_id,
                LearningStrategyRow.group_id == group_id,
                LearningStrategyRow.scene == scene,
            )
            .order_by(LearningStrategyRow.score.desc(), LearningStrategyRow.id)
        )
        async with self._sessions() as session:
            return [_to_strategy(r) for r in (await session.scalars(stmt)).all()]

    async def save_profile(
        self,
        profile: GroupReplyProfile,
        *,
        last_row_id: int,
        now: float,
        scene: str = DEFAULT_SCENE,
    ) -> None:
        values = {
            "bot_id": profile.bot_id,
            "group_id": profile.group_id,
            "scene": scene,
            "sample_turns": profile.sample_turns,
            "sample_bubbles": profile.sample_bubbles,
            "bubbles_p50": profile.bubbles_p50,
            "bubbles_p90": profile.bubbles_p90,
            "chars_p50": profile.chars_p50,
            "chars_p90": profile.chars_p90,
            "single_bubble_share": profile.single_bubble_share,
            "last_row_id": last_row_id,
            "updated_at": now,
        }
        await self._upsert(LearningReplyProfileRow, values)

    async def profile(
        self, bot_id: int, group_id: int, *, scene: str = DEFAULT_SCENE
    ) -> StoredProfile | None:
        stmt = select(LearningReplyProfileRow).where(
            LearningReplyProfileRow.bot_id == bot_id,
            LearningReplyProfileRow.group_id == group_id,
            LearningReplyProfileRow.scene == scene,
        )
        async with self._sessions() as session:
            row = (await session.scalars(stmt)).first()
        if row is None:
            return None
        profile = GroupReplyProfile(
            bot_id=row.bot_id,
            group_id=row.group_id,
            sample_turns=row.sample_turns,
            sample_bubbles=row.sample_bubbles,
            bubbles_p50=row.bubbles_p50,
            bubbles_p90=row.bubbles_p90,
            chars_p50=row.chars_p50,
            chars_p90=row.chars_p90,
            single_bubble_share=row.single_bubble_share,
        )
        return StoredProfile(profile, row.last_row_id, row.updated_at)

    async def counts(
        self, bot_id: int, group_id: int, *, scene: str = DEFAULT_SCENE
    ) -> LearningCounts:
        pair_stmt = (
            select(LearningReplyPairRow.learning_type, func.count())
            .where(
                LearningReplyPairRow.bot_id == bot_id,
                LearningReplyPairRow.group_id == group_id,
                LearningReplyPairRow.scene == scene,
            )
            .group_by(LearningReplyPairRow.learning_type)
        )
        async with self._sessions() as session:
            by_type = {t: int(n) for t, n in (await session.execute(pair_stmt)).all()}
            labels = await self._count(session, LearningPairLabelRow, bot_id, group_id, scene)
            strategies = await self._count(session, LearningStrategyRow, bot_id, group_id, scene)
        return LearningCounts(
            observed_pairs=by_type.get(LearningType.OBSERVED.value, 0),
            reflection_pairs=by_type.get(LearningType.SELF_REFLECTION.value, 0),
            labels=labels,
            strategies=strategies,
        )

    @staticmethod
    async def _count(
        session: AsyncSession, model: Any, bot_id: int, group_id: int, scene: str
    ) -> int:
        stmt = select(func.count()).where(
            model.bot_id == bot_id, model.group_id == group_id, model.scene == scene
        )
        return int((await session.execute(stmt)).scalar_one())
