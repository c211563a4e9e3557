"""Reading session variables for a turn and committing a turn's (or an admin's) changes.

A reply's ops are applied only after its delivery succeeded (`ChatTurnService._answer`), in
one transaction against the values current *at commit time*; when another turn committed in
between (version moved), the ops are re-applied on the fresh values (up to 3 tries).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from pallas.core.clock import Clock
from pallas.features.svars.config import Scalar, SvarConfig
from pallas.features.svars.ops import (
    ApplyResult,
    SvarChange,
    SvarOp,
    SvarRejection,
    VarKey,
    apply_ops,
    coerce,
)
from pallas.features.svars.pending import PendingCommits
from pallas.features.svars.render import SvarView
from pallas.features.svars.repository import (
    SessionVariableRepository,
    StoredVariable,
    VariableWrite,
)

log = logging.getLogger("pallas.svars")

COMMIT_TRIES = 3


def _values(config: SvarConfig, stored: dict[VarKey, StoredVariable]) -> dict[VarKey, Scalar]:
    out: dict[VarKey, Scalar] = {}
    for key, row in stored.items():
        var = config.get(key[1])
        if var is not None:
            out[key] = coerce(var, row.value)
    return out


def _writes(result: ApplyResult, stored: dict[VarKey, StoredVariable]) -> list[VariableWrite]:
    first: dict[VarKey, SvarChange] = {}
    last: dict[VarKey, SvarChange] = {}
    for change in result.changes:
        key = (change.member_id, change.name)
        first.setdefault(key, change)
        last[key] = change
    return [
        VariableWrite(
            member_id=key[0],
            name=key[1],
            value=value,
            expected_version=stored[key].version if key in stored else 0,
            op=last[key].op,
            operand=last[key].operand,
            old_value=first[key].old,
        )
        for key, value in result.values.items()
    ]


class SvarService:
    def __init__(
        self,
        repo: SessionVariableRepository,
        clock: Clock,
        pending: PendingCommits | None = None,
    ) -> None:
        self.repo = repo
        self._clock = clock
        self.pending = pending if pending is not None else PendingCommits()

    async def view(
        self, bot_id: int, group_id: int, speaker_id: int, config: SvarConfig
    ) -> SvarView | None:
        """The variables this turn sees; None when the group declares none."""
        if not config.variables or group_id == 0:
            return None
        await self.pending.settled(bot_id, group_id)  # a reply's commit right after its send
        stored = await self.repo.load(bot_id, group_id, [speaker_id])
        versions = {k: s.version for k, s in stored.items()}
        return SvarView(config, _values(config, stored), speaker_id, versions)

    async def apply(
        self,
        bot_id: int,
        group_id: int,
        speaker_id: int,
        config: SvarConfig,
        ops: Sequence[SvarOp],
        *,
        turn_id: str,
        actor: str,
    ) -> ApplyResult:
        """Apply and commit `ops` (atomic; re-applied on a concurrent change)."""
        if not ops or not config.variables:
            return ApplyResult({}, (), (), "no_ops")
        members = {speaker_id, *(op.user_id for op in ops if op.user_id is not None)}
        for _ in range(COMMIT_TRIES):
            stored = await self.repo.load(bot_id, group_id, members)
            result = apply_ops(config, _values(config, stored), ops, speaker_id=speaker_id)
            if not result.values:
                return result
            writes = _writes(result, stored)
            if await self.repo.commit(
                bot_id, group_id, writes, turn_id=turn_id, actor=actor, now=self._clock.now()
            ):
                return result
            log.info("group %s: session variables moved on; re-applying turn %s", group_id, turn_id)
        rejected = tuple(SvarRejection(op.raw, "conflict") for op in ops)
        return ApplyResult({}, (), rejected, "conflict")

    async def reset(
        self,
        bot_id: int,
        group_id: int,
        *,
        name: str | None,
        member_id: int | None,
        actor: str,
        turn_id: str,
    ) -> int:
        return await self.repo.reset(
            bot_id,
            group_id,
            name=name,
            member_id=member_id,
            turn_id=turn_id,
            actor=actor,
            now=self._clock.now(),
        )


def result_trace(result: ApplyResult) -> dict[str, object]:
    """JSON for the injection snapshot."""
    return {
        "reason": result.reason,
        "changes": [
            {
                "name": c.name,
                "member_id": c.member_id,
                "op": c.op,
                "operand": c.operand,
                "old": c.old,
                "new": c.new,
                "clamped": c.clamped,
            }
            for c in result.changes
        ],
        "rejected": [{"tag": r.raw, "reason": r.reason} for r in result.rejected],
    }
