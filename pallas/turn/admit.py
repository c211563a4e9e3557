"""Per-group concurrency for REPLY turns: at most N running, a bounded queue, then refusal.

Process-local by nature (it guards this process's own LLM calls); the verdict itself is the
pure `decide_admission` from routing.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass

from pallas.routing.config import CooldownConfig
from pallas.routing.cooldown import AdmissionVerdict, decide_admission


@dataclass
class _GroupSlots:
    running: int = 0
    queued: int = 0
    condition: asyncio.Condition | None = None


class GroupAdmission:
    def __init__(self) -> None:
        self._groups: dict[tuple[int, int], _GroupSlots] = {}

    def _slots(self, bot_id: int, group_id: int) -> _GroupSlots:
        slots = self._groups.setdefault((bot_id, group_id), _GroupSlots())
        if slots.condition is None:
            slots.condition = asyncio.Condition()
        return slots

    @contextlib.asynccontextmanager
    async def slot(
        self, bot_id: int, group_id: int, config: CooldownConfig
    ) -> AsyncIterator[str | None]:
        """Yields None when the turn may run, or the refusal reason (`queue_full`)."""
        slots = self._slots(bot_id, group_id)
        assert slots.condition is not None
        refused: str | None = None
        async with slots.condition:
            verdict = decide_admission(
                config, running=slots.running, queued=slots.queued, user_in_flight=False
            )
            if verdict.verdict is AdmissionVerdict.REJECT:
                refused = verdict.reason
            else:
                if verdict.verdict is AdmissionVerdict.QUEUE:
                    slots.queued += 1
                    try:
                        await slots.condition.wait_for(
                            lambda: slots.running < config.max_concurrency
                        )
                    finally:
                        slots.queued -= 1
                slots.running += 1
        if refused is not None:
            yield refused
            return
        try:
            yield None
        finally:
            async with slots.condition:
                slots.running -= 1
                slots.condition.notify()
