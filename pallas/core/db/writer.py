"""Batched, non-blocking message recording.

Event handlers hand messages to `MessageWriter.submit` and return at once; a background task
writes them in batches (one transaction per batch), so a burst of events costs a few commits
instead of one each. A failing write is logged and retried with backoff — messages are kept in
memory until they are stored. Readers that need the newest rows call `flush()` first.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from pallas.core.db.repositories.messages import MessageRepository
from pallas.core.records import StoredMessage

log = logging.getLogger("pallas.recorder")


class MessageWriter:
    def __init__(
        self, repository: MessageRepository, *, batch_size: int = 500, linger: float = 0.02
    ) -> None:
        self._repo = repository
        self._batch_size = batch_size
        self._linger = linger
        self._pending: list[StoredMessage] = []
        self._wakeup = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._task: asyncio.Task[None] | None = None
        self._closing = False
        self.written = 0

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="pallas-message-writer")

    def submit(self, message: StoredMessage) -> None:
        self._pending.append(message)
        self._idle.clear()
        self._wakeup.set()

    async def flush(self) -> None:
        """Wait until everything submitted so far is stored (or the writer stopped)."""
        if self._task is None or self._task.done():
            await self._write_pending_once()
            return
        await self._idle.wait()

    async def close(self) -> None:
        self._closing = True
        self._wakeup.set()
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self._write_pending_once()

    async def _run(self) -> None:
        backoff = 0.1
        while True:
            await self._wakeup.wait()
            self._wakeup.clear()
            if self._linger and not self._closing:
                await asyncio.sleep(self._linger)  # let a burst accumulate
            while self._pending:
                batch = self._pending[: self._batch_size]
                try:
                    await self._repo.add_many(batch)
                except Exception:
                    log.exception(
                        "storing %d messages failed; retrying in %.1fs", len(batch), backoff
                    )
                    await asyncio.sleep(backoff)
                    backoff = min(backoff * 2, 5.0)
                    if self._closing:
                        return
                    continue
                backoff = 0.1
                del self._pending[: len(batch)]
                self.written += len(batch)
            self._idle.set()
            if self._closing:
                return

    async def _write_pending_once(self) -> None:
        if not self._pending:
            self._idle.set()
            return
        batch, self._pending = self._pending, []
        try:
            await self._repo.add_many(batch)
            self.written += len(batch)
        except Exception:
            self._pending = batch + self._pending
            log.exception("final write of %d messages failed", len(batch))
        self._idle.set()
