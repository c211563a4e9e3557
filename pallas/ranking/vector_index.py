"""An in-memory vector index per (scope, kind): top-k cosine over every live embedded row.

Candidate loading (`MemoryRepository.candidates`) caps a block at the `candidate_cap` most
recently used rows, so with 10,000 memories in a group an old fact would never be scored. With
embeddings configured, the service also asks this index for the rows nearest the question — over
*all* live rows of the readable scopes, filtered by subject for personal kinds — and scores them
together with the recent ones (BM25 + concepts + cosine, `scoring`). One float32 matrix of
unit vectors per (scope, kind); a search is one matrix-vector product and an `argpartition`.

The index is kept in step with the store by its write generation: when the scope's generation
moved, `refresh` asks the repository for the live ids and for the vectors of the rows it does not
have yet (new rows, backfilled embeddings), and drops the rest — so a write costs a delta, not a
rebuild. Rows never leave their scope: an index holds one scope's rows only.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

Vector = npt.NDArray[np.float32]


def unit(vector: Sequence[float]) -> Vector | None:
    """`vector` as a float32 unit vector; None for an empty or zero vector."""
    arr = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(arr)) if arr.size else 0.0
    return arr / norm if norm > 0 else None


@dataclass(frozen=True, slots=True)
class VectorHit:
    item_id: int
    cosine: float  # clamped to 0..1


class VectorIndex:
    """Unit vectors of one (scope, kind), with each row's subject (for personal kinds)."""

    __slots__ = ("_dims", "_ids", "_matrix", "_subjects", "generation")

    def __init__(self) -> None:
        self._ids: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self._subjects: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self._matrix: Vector = np.zeros((0, 0), dtype=np.float32)
        self._dims = 0
        self.generation: str | None = None

    def __len__(self) -> int:
        return int(self._ids.size)

    @property
    def ids(self) -> frozenset[int]:
        return frozenset(int(i) for i in self._ids)

    def add(self, rows: Iterable[tuple[int, int | None, Sequence[float]]]) -> int:
        """Add (id, subject, vector) rows; rows of another dimension than the index are skipped
        (a changed embedding model: the store re-embeds them, see the service's backfill)."""
        ids, subjects, vectors = [], [], []
        for item_id, subject, vector in rows:
            vec = unit(vector)
            if vec is None:
                continue
            if not self._dims:
                self._dims = int(vec.size)
            if vec.size != self._dims:
                continue
            ids.append(item_id)
            subjects.append(-1 if subject is None else subject)
            vectors.append(vec)
        if not ids:
            return 0
        block = np.vstack(vectors).astype(np.float32)
        self._matrix = block if not len(self) else np.vstack([self._matrix, block])
        self._ids = np.concatenate([self._ids, np.asarray(ids, dtype=np.int64)])
        self._subjects = np.concatenate([self._subjects, np.asarray(subjects, dtype=np.int64)])
        return len(ids)

    def keep_only(self, live_ids: Iterable[int]) -> int:
        """Drop every row whose id is not in `live_ids` (deleted / replaced); returns how many."""
        if not len(self):
            return 0
        live = np.fromiter(live_ids, dtype=np.int64)
        mask = np.isin(self._ids, live)
        dropped = int(mask.size - int(mask.sum()))
        if dropped:
            self._ids, self._subjects = self._ids[mask], self._subjects[mask]
            self._matrix = self._matrix[mask]
        return dropped

    def search(
        self, query: Sequence[float], k: int, *, subject: int | None = None
    ) -> list[VectorHit]:
        """The `k` rows nearest `query` (cosine > 0), best first; only `subject`'s when given."""
        q = unit(query)
        if q is None or not len(self) or k <= 0 or q.size != self._dims:
            return []
        if subject is not None:  # one member's rows only: score those, not the scope's
            rows = np.flatnonzero(self._subjects == subject)
            if not rows.size:
                return []
            scores = self._matrix[rows] @ q
        else:
            rows, scores = None, self._matrix @ q
        k = min(k, int(scores.size))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        ids = self._ids if rows is None else self._ids[rows]
        return [VectorHit(int(ids[i]), min(1.0, float(scores[i]))) for i in top if scores[i] > 0.0]

    def cosines(self, query: Sequence[float], item_ids: Iterable[int]) -> dict[int, float]:
        """Cosine of `query` with each of `item_ids` the index holds (0..1)."""
        q = unit(query)
        if q is None or not len(self) or q.size != self._dims:
            return {}
        wanted = np.fromiter(item_ids, dtype=np.int64)
        mask = np.isin(self._ids, wanted)
        if not mask.any():
            return {}
        scores = np.clip(self._matrix[mask] @ q, 0.0, 1.0)
        return {int(i): float(s) for i, s in zip(self._ids[mask], scores, strict=True)}
