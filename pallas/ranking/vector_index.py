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

The rows are one immutable `IndexRows` (ids, subjects, matrix), replaced whole by a refresh: a
search (`nearest_with_cosines`) reads a consistent snapshot, on whichever thread it runs, while
the event loop refreshes the index. One pass over the matrix answers both questions of a
retrieval: the nearest rows and the cosines of the rows already loaded.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field

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


# (the wanted ids, their positions among an index's rows, those rows' ids as ints)
_Positions = tuple[npt.NDArray[np.int64], npt.NDArray[np.intp], list[int]]
POSITIONS_KEPT = 8  # wanted-id arrays whose positions a snapshot remembers
CHUNK_BYTES = 512 * 1024  # one block of rows in `_best`: 256 rows of 512 float32, in L2


@dataclass(frozen=True, slots=True)
class IndexRows:
    """One index's rows at one moment (never changed in place: safe to read on any thread)."""

    ids: npt.NDArray[np.int64]
    subjects: npt.NDArray[np.int64]  # -1: no subject
    matrix: Vector  # (rows, dims) unit vectors, C-contiguous float32
    dims: int
    # where a wanted-id array's rows are (`_positions`): a retrieval asks for the same loaded
    # rows turn after turn, so the search's `isin` over every row is made once per snapshot
    _memo: dict[int, _Positions] = field(default_factory=dict, compare=False, repr=False)

    def __len__(self) -> int:
        return int(self.ids.size)

    def match(
        self,
        q: Vector,
        k: int,
        subject: int | None,
        wanted: npt.NDArray[np.int64],
        *,
        one_call: bool = False,
        offset: float = 0.0,
    ) -> tuple[list[VectorHit], dict[int, float]]:
        """The `k` rows nearest the unit vector `q` (cosine > 0; only `subject`'s when given),
        and the cosine (0..1) of each row of `wanted` this index holds — one matrix pass.
        `q` may hold several unit vectors, one per row (a question's parts): a row's cosine is
        its best over them, from the same one pass (see `_best`; `one_call`: one BLAS call).
        `offset` is added to every score before the clip (a question reweighted by an
        `adapter.QuestionAdapter`: its scores are `q · row + offset`)."""
        if not len(self) or q.shape[-1] != self.dims:
            return [], {}
        if subject is None:
            scores = _shifted(_best(self.matrix, q, one_call=one_call), offset)
            hits = _top(self.ids, scores, k) if k > 0 else []
            return hits, self._wanted_cosines(scores, wanted) if wanted.size else {}
        # one member's rows only: score those, not the scope's (the loaded rows are theirs too;
        # a loaded row of someone else, if any, still gets its cosine)
        mine = self.subjects == subject
        rows = np.flatnonzero(mine)
        hits, cosines = [], {}
        if rows.size:
            ids, scores = self.ids[rows], _shifted(_best(self.matrix[rows], q), offset)
            hits = _top(ids, scores, k) if k > 0 else []
            cosines = _cosines(ids, scores, wanted) if wanted.size else {}
        if len(cosines) == wanted.size:  # every loaded row is theirs (the usual case)
            return hits, cosines
        others = ~mine & np.isin(self.ids, wanted)
        if others.any():
            scored = _shifted(_best(self.matrix[others], q), offset)
            cosines.update(_cosines(self.ids[others], scored, wanted))
        return hits, cosines

    def _wanted_cosines(self, scores: Vector, wanted: npt.NDArray[np.int64]) -> dict[int, float]:
        """`_cosines` over all the rows, the positions of `wanted` looked up once per array
        (the caller keeps one array per loaded window: `wanted` must not change)."""
        kept = self._memo.get(id(wanted))
        if kept is None or kept[0] is not wanted:
            positions = np.flatnonzero(np.isin(self.ids, wanted))
            if len(self._memo) >= POSITIONS_KEPT:
                self._memo.clear()
            kept = self._memo[id(wanted)] = (wanted, positions, self.ids[positions].tolist())
        _, positions, ids = kept
        clipped = np.clip(scores[positions], 0.0, 1.0)
        return dict(zip(ids, clipped.tolist(), strict=True))


def _cosines(
    ids: npt.NDArray[np.int64], scores: Vector, wanted: npt.NDArray[np.int64]
) -> dict[int, float]:
    """The cosines (clipped to 0..1, as the hits are) of the rows of `wanted` among `ids`."""
    mask = np.isin(ids, wanted)
    clipped = np.clip(scores[mask], 0.0, 1.0)
    return dict(zip(ids[mask].tolist(), clipped.tolist(), strict=True))


def _best(matrix: Vector, q: Vector, *, one_call: bool = False) -> Vector:
    """Each row's cosine with `q`, or its best over `q`'s rows.

    Several rows of `q` are multiplied a cache-sized block of the matrix at a time
    (CHUNK_BYTES): OpenBLAS's product of a large matrix with 2-4 vectors streams it far slower
    than the memory allows. Each block is scored as q · blockᵀ (parts × rows) and the best
    taken down the parts, a maximum along contiguous rows: the maximum across each row's 2-4
    columns of blockᵀ · q had been a quarter of the pass. 10,000 × 512 rows and three parts
    take 2.05 ms this way, 3.5 ms by blocks the other way round, 5.5 ms as one product; the
    same cosines to 1e-7 (`benchmarks.memory_vectors --best`). `one_call` keeps one BLAS call,
    for a worker thread (each block would take the GIL back from a busy event loop); there
    the matrix-first product is the faster one (9 ms at 20,000 rows against 11)."""
    if q.ndim == 1:
        return matrix @ q
    step = max(1, CHUNK_BYTES // max(1, matrix.shape[1] * matrix.itemsize))
    if one_call:
        whole: Vector = (matrix @ q.T).max(axis=1)
        return whole
    parts = np.ascontiguousarray(q, dtype=np.float32)
    best = np.empty(len(matrix), dtype=np.float32)
    block = np.empty((len(parts), min(step, len(matrix))), dtype=np.float32)
    for start in range(0, len(matrix), step):
        rows = matrix[start : start + step]
        scores = (
            block if len(rows) == block.shape[1] else np.empty((len(parts), len(rows)), np.float32)
        )
        np.matmul(parts, rows.T, out=scores)
        scores.max(axis=0, out=best[start : start + step])
    return best


def _shifted(scores: Vector, offset: float) -> Vector:
    """`scores` + `offset` (the same array when the offset is 0)."""
    if not offset:
        return scores
    shifted: Vector = scores + np.float32(offset)
    return shifted


def _is_vector(stored: bytes) -> bool:
    """Stored bytes that can hold a float32 vector (a whole number of 4-byte values)."""
    return len(stored) >= 4 and len(stored) % 4 == 0


def _top(ids: npt.NDArray[np.int64], scores: Vector, k: int) -> list[VectorHit]:
    k = min(k, int(scores.size))
    top = np.argpartition(-scores, k - 1)[:k]
    top = top[np.argsort(-scores[top], kind="stable")]
    return [VectorHit(int(ids[i]), min(1.0, float(scores[i]))) for i in top if scores[i] > 0.0]


_EMPTY = IndexRows(
    np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros((0, 0), np.float32), 0
)


def nearest_with_cosines(
    indexes: Sequence[IndexRows],
    q: Vector,
    k: int,
    *,
    subject: int | None,
    wanted: Collection[int] | npt.NDArray[np.int64],
    one_call: bool = False,
    offset: float = 0.0,
) -> tuple[list[VectorHit], dict[int, float]]:
    """Over several indexes' rows: the `k` nearest `q` (best first) and the cosine of each row
    of `wanted` they hold (an int64 array is used as is, and where its rows are is remembered
    per index snapshot: pass the same array for the same rows, never a changed one). `q` is
    one unit vector or several (a question's parts, one per row): a row's cosine is then its
    best over them; `offset` is added to every score before the clip (see `IndexRows.match`).
    Pure numpy on snapshots (safe on any thread: pass `one_call` there, see `_best`); ~1.7 ms
    over 5,000 rows and three parts on the event loop."""
    want = (
        wanted
        if isinstance(wanted, np.ndarray)
        else np.fromiter(wanted, dtype=np.int64, count=len(wanted))
    )
    hits: list[VectorHit] = []
    cosines: dict[int, float] = {}
    for rows in indexes:
        found, scored = rows.match(q, k, subject, want, one_call=one_call, offset=offset)
        hits += found
        cosines.update(scored)
    hits.sort(key=lambda h: (-h.cosine, h.item_id))
    return hits[: max(k, 0)], cosines


class VectorIndex:
    """Unit vectors of one (scope, kind), with each row's subject (for personal kinds)."""

    __slots__ = ("_rows", "generation")

    def __init__(self) -> None:
        self._rows = _EMPTY
        self.generation: str | None = None

    def __len__(self) -> int:
        return len(self._rows)

    @property
    def rows(self) -> IndexRows:
        """The rows now (a snapshot: a later `add` / `keep_only` replaces, never changes it)."""
        return self._rows

    @property
    def ids(self) -> frozenset[int]:
        return frozenset(self._rows.ids.tolist())

    def add(self, rows: Iterable[tuple[int, int | None, Sequence[float]]]) -> int:
        """Add (id, subject, vector) rows; rows of another dimension than the index are skipped
        (a changed embedding model: the store re-embeds them, see the service's backfill)."""
        dims = self._rows.dims
        ids, subjects, vectors = [], [], []
        for item_id, subject, vector in rows:
            vec = unit(vector)
            if vec is None:
                continue
            if not dims:
                dims = int(vec.size)
            if vec.size != dims:
                continue
            ids.append(item_id)
            subjects.append(-1 if subject is None else subject)
            vectors.append(vec)
        if not ids:
            return 0
        return self._append(ids, subjects, np.vstack(vectors).astype(np.float32), dims)

    def add_stored(self, rows: Sequence[tuple[int, int | None, bytes]]) -> int:
        """`add` for vectors as the store keeps them (float32 little-endian bytes), decoded
        and made unit in one numpy pass (thousands of rows in milliseconds, on the event
        loop). Rows of another dimension, zero or not finite are skipped, as `add` skips."""
        # the index's dimension, else the first stored vector's (a broken one sets nothing)
        dims = self._rows.dims or next((len(r[2]) // 4 for r in rows if _is_vector(r[2])), 0)
        kept = [r for r in rows if dims and len(r[2]) == 4 * dims]
        if not kept:
            return 0
        stored = np.frombuffer(b"".join(r[2] for r in kept), dtype="<f4")
        stored = stored.reshape(len(kept), dims)  # a read-only view of the joined bytes
        norms = np.sqrt(np.einsum("ij,ij->i", stored, stored))
        good = np.isfinite(norms) & (norms > 0)
        block: Vector = (stored[good] / norms[good, None]).astype(np.float32, copy=False)
        taken = [r for r, ok in zip(kept, good.tolist(), strict=True) if ok]
        ids = [r[0] for r in taken]
        subjects = [-1 if r[1] is None else r[1] for r in taken]
        return self._append(ids, subjects, block, dims) if ids else 0

    def _append(self, ids: list[int], subjects: list[int], block: Vector, dims: int) -> int:
        """A new snapshot: the old rows and these (a search on the old one is unaffected)."""
        old = self._rows
        self._rows = IndexRows(
            np.concatenate([old.ids, np.asarray(ids, dtype=np.int64)]),
            np.concatenate([old.subjects, np.asarray(subjects, dtype=np.int64)]),
            block if not len(old) else np.vstack([old.matrix, block]),
            dims,
        )
        return len(ids)

    def keep_only(self, live_ids: Iterable[int]) -> int:
        """Drop every row whose id is not in `live_ids` (deleted / replaced); returns how many."""
        old = self._rows
        if not len(old):
            return 0
        live = np.fromiter(live_ids, dtype=np.int64)
        mask = np.isin(old.ids, live)
        dropped = int(mask.size - int(mask.sum()))
        if dropped:
            self._rows = IndexRows(old.ids[mask], old.subjects[mask], old.matrix[mask], old.dims)
        return dropped

    def search(
        self, query: Sequence[float], k: int, *, subject: int | None = None
    ) -> list[VectorHit]:
        """The `k` rows nearest `query` (cosine > 0), best first; only `subject`'s when given."""
        q = unit(query)
        if q is None:
            return []
        return self._rows.match(q, k, subject, np.zeros(0, dtype=np.int64))[0]

    def cosines(self, query: Sequence[float], item_ids: Iterable[int]) -> dict[int, float]:
        """Cosine of `query` with each of `item_ids` the index holds (0..1)."""
        q = unit(query)
        if q is None:
            return {}
        return self._rows.match(q, 0, None, np.fromiter(item_ids, dtype=np.int64))[1]
