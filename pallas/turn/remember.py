"""Remember a reply turn (`TurnRecorder`): its injection snapshot (every ending), the session
exchange and the after-turn hooks (a delivered answer only). Writes are write-behind; hooks run
in the background until `drain`."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

from pallas.core.clock import Clock
from pallas.core.db.repositories.chat_sessions import ChatSessionRepository
from pallas.core.db.repositories.snapshots import InjectionSnapshot, SnapshotRepository
from pallas.core.message_text import session_user_content
from pallas.core.records import SessionTurn
from pallas.core.turn import AfterTurnHook, CompletedTurn, TurnInput
from pallas.turn.contracts import (
    AnswerRecord,
    ModelCall,
    PreparedTurn,
    snapshot_json,
)

log = logging.getLogger("pallas.chat")


@dataclass
class TurnRecorder:
    """The reply step's memory of a turn (snapshot, session turns, after-turn hooks)."""

    clock: Clock
    snapshots: SnapshotRepository
    chat_sessions: ChatSessionRepository
    hooks: Sequence[AfterTurnHook] = ()
    _background: set[asyncio.Task[None]] = field(default_factory=set)

    def save_snapshot(
        self,
        turn: TurnInput,
        prepared: PreparedTurn,
        outcome: str,
        call: ModelCall | None = None,
        answer: AnswerRecord | None = None,
    ) -> None:
        snapshot = InjectionSnapshot(
            turn_id=prepared.turn_id,
            bot_id=turn.bot_id,
            group_id=turn.group_id,
            user_id=turn.user_id,
            message_id=turn.message_id,
            created_at=self.clock.now(),
            model=prepared.model,
            outcome=outcome,
            data=snapshot_json(prepared.snapshot.get(), call, answer),
        )
        self.snapshots.save_later(snapshot)  # write-behind; readers flush first

    def append_session(self, turn: TurnInput, user_text: str, reply_text: str) -> None:
        now = self.clock.now()
        bot_id, group_id, user_id = turn.bot_id, turn.group_id, turn.user_id
        self.chat_sessions.append_later(  # write-behind, batched
            [
                SessionTurn(
                    bot_id,
                    group_id,
                    user_id,
                    role="user",
                    content=session_user_content(user_text, turn),  # images: [图片]:url=X
                    created_at=now,
                    extra={"message_id": turn.message_id},
                ),
                SessionTurn(
                    bot_id, group_id, user_id, role="assistant", content=reply_text, created_at=now
                ),
            ]
        )

    def after_turn(self, completed: CompletedTurn) -> None:
        for hook in self.hooks:
            task = asyncio.create_task(_run_hook(hook, completed), name=f"after-turn:{hook.name}")
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    async def drain(self) -> None:
        """Wait for after-turn work (tests, shutdown)."""
        while self._background:
            await asyncio.gather(*list(self._background), return_exceptions=True)


async def _run_hook(hook: AfterTurnHook, completed: CompletedTurn) -> None:
    try:
        await hook.after_turn(completed)
    except Exception:
        log.exception(
            "after-turn hook %s failed (group %s, turn %s)",
            hook.name,
            completed.turn.group_id,
            completed.turn_id,
        )
