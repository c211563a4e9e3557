"""The offline sentence encoder in a process of its own (`encoder_worker.py`), asked over pipes.

A pure-numpy encoder on a thread shares the GIL with the event loop: while the loop is busy (a
burst in a group) each of the encoder's numpy calls waits for the loop to hand the GIL back,
and an encode of 3 ms took 65 ms (measured; docs/providers.md). In its own process it runs on
another core whatever the loop does; the bot's side is a few small reads and writes on the loop.

- requests are answered in order (`_Pipes` hands each frame to the oldest one waiting, in the
  read callback itself: one wake-up of the asking task per answer); a request whose retrieval
  was cancelled still takes its own answer, so answers never shift to the next request;
- an answer later than `timeout_s`, or a worker that exits, ends that process: the encode
  raises `EncoderUnavailable` (the retrieval ranks by BM25 and concepts this turn), ONE warning
  is logged, and a new worker is started in the background after `restart_after_s`; while it
  is down `available` is False and encodes fail at once instead of waiting;
- `aclose()` closes the worker's stdin (it exits) and kills it if it has not within 2 s.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import subprocess
import sys
import time
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from pallas.core.errors import ProviderError
from pallas.providers.encoder_worker import HEADER, SHAPE  # the worker's frames
from pallas.providers.sentence_encoder import LOCAL_DIM, Matrix

log = logging.getLogger("pallas.memory")

WORKER = Path(__file__).with_name("encoder_worker.py")
LOAD_TIMEOUT_S = 120.0  # the worker's interpreter start + the model's load (~1-2 s measured)
ENCODE_TIMEOUT_S = 20.0  # a batch of 32 facts is ~50 ms; far past that the worker is stuck
RESTART_AFTER_S = 30.0
MAX_RESTARTS = 5  # in a row without one answered request: then it stays down (logged)
CLOSE_WAIT_S = 2.0
# one BLAS thread: the worker's core is its share of a small machine
_ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


@runtime_checkable
class _PipeWriter(Protocol):
    """The worker's stdin as a transport: by what it does, not its class. uvloop's pipe
    transports (the bot's loop under uvicorn) are not `asyncio.WriteTransport` subclasses; a
    class check took every request for a dead worker, and the encoder was stopped at its first
    encode (every deployment ran without vectors)."""

    def write(self, data: bytes) -> None: ...

    def is_closing(self) -> bool: ...


class EncoderUnavailable(ProviderError):
    """The encoder process could not answer (down, restarting, timed out, failed to load)."""


class _Pipes(asyncio.SubprocessProtocol):
    """The worker's stdout read into frames, each answering the oldest request waiting.

    Parsed in `pipe_data_received` itself and handed to the waiting future there: an answer
    costs the event loop one wake-up of the asking task, not a reader task's hops in between
    (each hop waits for a whole pass of a busy loop's ready callbacks)."""

    def __init__(self) -> None:
        self.ready: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self.waiting: deque[asyncio.Future[bytes]] = deque()
        self.exited: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._buffer = bytearray()

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        if fd != 1:
            return
        self._buffer += data
        while len(self._buffer) >= HEADER.size:
            size = HEADER.unpack_from(self._buffer)[0]
            if len(self._buffer) < HEADER.size + size:
                return
            frame = bytes(self._buffer[HEADER.size : HEADER.size + size])
            del self._buffer[: HEADER.size + size]
            self._answer(frame)

    def _answer(self, frame: bytes) -> None:
        if not self.ready.done():
            self.ready.set_result(frame)
            return
        if self.waiting:  # the oldest request's answer, even if its caller gave up (dropped)
            future = self.waiting.popleft()
            if not future.done():
                future.set_result(frame)

    def process_exited(self) -> None:
        gone = ConnectionResetError("the encoder process exited")
        for future in (self.ready, *self.waiting):
            if not future.done():
                future.set_exception(gone)
        self.waiting.clear()
        if not self.exited.done():
            self.exited.set_result(None)


class _Worker:
    """One running worker process and its pipes."""

    def __init__(
        self,
        transport: asyncio.SubprocessTransport,
        pipes: _Pipes,
        info: dict[str, object],
    ) -> None:
        self.transport = transport
        self.pipes = pipes
        self.pid = transport.get_pid()
        self.model_id = str(info.get("model_id", ""))
        self.dim = int(str(info.get("dim", LOCAL_DIM)))
        self.load_s = float(str(info.get("load_s", 0.0)))
        self.rss_mb = float(str(info.get("rss_mb", 0.0)))
        self.table = str(info.get("table", "in memory"))  # where its embedding table is

    @classmethod
    async def start(cls, timeout_s: float, table_dir: Path | None) -> _Worker:
        loop = asyncio.get_running_loop()
        table = ["--table-dir", str(table_dir)] if table_dir is not None else []
        transport, pipes = await loop.subprocess_exec(
            _Pipes, sys.executable, "-P", str(WORKER), *table,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None,
            env={**os.environ, **_ONE_THREAD},
        )  # fmt: skip
        try:
            async with asyncio.timeout(timeout_s):
                frame = await pipes.ready
        except (TimeoutError, ConnectionError) as exc:
            await _stop(transport, pipes)
            raise EncoderUnavailable(f"the encoder process did not start: {exc!r}") from exc
        except BaseException:
            await _stop(transport, pipes)
            raise
        if frame[:1] != b"R":
            await _stop(transport, pipes)
            raise EncoderUnavailable(frame[1:].decode("utf-8", "replace") or "no reason given")
        return cls(transport, pipes, json.loads(frame[1:].decode("utf-8")))

    async def ask(self, texts: Sequence[str]) -> Matrix:
        stdin = self.transport.get_pipe_transport(0)
        if not isinstance(stdin, _PipeWriter):
            raise ConnectionResetError("the encoder process exited")
        if stdin.is_closing() or self.pipes.exited.done():
            raise ConnectionResetError("the encoder process exited")
        payload = json.dumps(list(texts), ensure_ascii=False).encode("utf-8")
        answer = asyncio.get_running_loop().create_future()
        self.pipes.waiting.append(answer)
        stdin.write(HEADER.pack(len(payload)) + payload)
        frame = await answer
        if frame[:1] == b"E":
            raise ValueError(frame[1:].decode("utf-8", "replace"))
        rows, dim = SHAPE.unpack_from(frame, 1)
        flat = np.frombuffer(frame, dtype="<f4", offset=1 + SHAPE.size).astype(np.float32)
        matrix: Matrix = flat.reshape(rows, dim)
        return matrix

    async def stop(self) -> None:
        await _stop(self.transport, self.pipes)


async def _stop(transport: asyncio.SubprocessTransport, pipes: _Pipes) -> None:
    """Close its stdin (the worker exits); kill it if it has not within CLOSE_WAIT_S."""
    if transport.get_returncode() is None:
        stdin = transport.get_pipe_transport(0)
        if stdin is not None:
            stdin.close()
        try:
            async with asyncio.timeout(CLOSE_WAIT_S):
                await asyncio.shield(pipes.exited)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                transport.kill()
            await asyncio.shield(pipes.exited)
    transport.close()


class ProcessEncoder:
    """`SentenceEncoder` backed by the worker process (see the module docstring)."""

    def __init__(
        self,
        worker: _Worker,
        *,
        timeout_s: float = ENCODE_TIMEOUT_S,
        restart_after_s: float = RESTART_AFTER_S,
        table_dir: Path | None = None,
    ) -> None:
        self._worker: _Worker | None = worker
        self.model_id = worker.model_id
        self.dim = worker.dim
        self.load_seconds = worker.load_s
        self.rss_mb = worker.rss_mb  # the worker's whole resident set: the encoder's cost
        self.table = worker.table
        self._table_dir = table_dir
        self.pid = worker.pid
        self._timeout_s = timeout_s
        self._restart_after_s = restart_after_s
        self._restart: asyncio.Task[None] | None = None
        self._failures = 0
        self._closed = False

    @classmethod
    async def start(
        cls,
        *,
        load_timeout_s: float = LOAD_TIMEOUT_S,
        table_dir: Path | None = None,
        **options: float,
    ) -> ProcessEncoder:
        """Start the worker and wait until its model is loaded (raises `EncoderUnavailable`).
        `table_dir`: where the worker keeps the model's embedding table as a file (`None`: in
        its memory, ~60 MB more; `encoder_table`)."""
        worker = await _Worker.start(load_timeout_s, table_dir)
        return cls(worker, table_dir=table_dir, **options)

    @property
    def available(self) -> bool:
        """Whether a worker is up now (False while one restarts, or after `aclose`)."""
        return self._worker is not None and not self._closed

    async def encode(self, texts: Sequence[str]) -> Matrix:
        """Requests are answered in order, several may wait at once (the worker encodes one
        after the other); a caller cancelled meanwhile leaves its answer to be dropped."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        worker = self._worker
        if worker is None or self._closed:
            raise EncoderUnavailable("the encoder process is restarting")
        try:
            async with asyncio.timeout(self._timeout_s):
                matrix = await worker.ask(texts)
        except ValueError as exc:  # the worker answered with an error: this request only
            raise EncoderUnavailable(f"the encoder could not encode: {exc}") from exc
        except (TimeoutError, ConnectionError, OSError) as exc:
            await self._lost(worker, exc)
            raise EncoderUnavailable(f"the encoder process failed: {exc!r}") from exc
        self._failures = 0
        return matrix

    async def _lost(self, worker: _Worker, exc: BaseException) -> None:
        if self._worker is not worker:  # another request already saw it go
            return
        self._worker = None
        await worker.stop()
        self._failures += 1
        if self._failures > MAX_RESTARTS:
            log.error(
                "sentence encoder process failed %d times in a row (%r); it stays down, "
                "memory recall uses BM25 and concept classes", self._failures, exc,
            )  # fmt: skip
            return
        log.warning(
            "sentence encoder process (pid %s) failed: %r (exit code %s); restarting in %.0f s, "
            "memory recall uses BM25 and concept classes meanwhile",
            worker.pid, exc, worker.transport.get_returncode(), self._restart_after_s,
        )  # fmt: skip
        self._restart = asyncio.ensure_future(self._restart_later())

    async def _restart_later(self) -> None:
        await asyncio.sleep(self._restart_after_s)
        if self._closed:
            return
        started = time.perf_counter()
        try:
            worker = await _Worker.start(LOAD_TIMEOUT_S, self._table_dir)
        except EncoderUnavailable as exc:
            self._failures += 1
            if self._failures > MAX_RESTARTS:
                log.error("sentence encoder process did not restart (%s); it stays down", exc)
                return
            log.warning("sentence encoder process did not restart (%s); trying again in %.0f s",
                        exc, self._restart_after_s)  # fmt: skip
            self._restart = asyncio.ensure_future(self._restart_later())
            return
        if self._closed or worker.model_id != self.model_id:  # another model: never mixed
            await worker.stop()
            if not self._closed:
                log.error("sentence encoder restarted as %s, not %s; it stays down",
                          worker.model_id, self.model_id)  # fmt: skip
            return
        self._worker, self.pid = worker, worker.pid
        log.info("sentence encoder process restarted (pid %s) in %.1f s", worker.pid,
                 time.perf_counter() - started)  # fmt: skip

    async def aclose(self) -> None:
        self._closed = True
        restart, self._restart = self._restart, None
        if restart is not None and not restart.done():
            restart.cancel()  # a worker it was starting is stopped by `_Worker.start`
            await asyncio.wait([restart])  # its end, without taking on its cancellation
        worker, self._worker = self._worker, None
        if worker is not None:
            await worker.stop()


__all__ = ["EncoderUnavailable", "ProcessEncoder"]
