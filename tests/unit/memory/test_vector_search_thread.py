"""Where a turn's vector search runs: a big shared index's pass off the event loop's thread.

The knowledge of a busy group is thousands of rows; its matrix pass (~1-4 ms of BLAS a turn)
on the loop delays every other group's line. BLAS releases the GIL, so in a worker thread the
loop serves the rest meanwhile. A member's own rows are few: their pass stays on the loop.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

from pallas.features.memory import embeddings
from pallas.ranking import IndexRows, nearest_with_cosines


def _rows(count: int, *, start: int = 1, subject: int = -1) -> IndexRows:
    rng = np.random.default_rng(count + start)
    matrix = rng.standard_normal((count, 16)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    ids = np.arange(start, start + count, dtype=np.int64)
    return IndexRows(ids, np.full(count, subject, dtype=np.int64), matrix, 16)


def _question() -> np.ndarray:
    q = np.random.default_rng(7).standard_normal((3, 16)).astype(np.float32)
    return q / np.linalg.norm(q, axis=1, keepdims=True)


@pytest.fixture
def threads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    seen: list[int] = []
    real = embeddings.nearest_with_cosines

    def recording(*args: object, **kwargs: object) -> object:
        seen.append(threading.get_ident())
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(embeddings, "nearest_with_cosines", recording)
    return seen


@pytest.mark.parametrize(
    ("indexes", "subject", "off_loop"),
    [
        # a scope's shared rows at the threshold, in one index or over two scopes
        ([embeddings.SEARCH_THREAD_ROWS], None, True),
        ([embeddings.SEARCH_THREAD_ROWS // 2, embeddings.SEARCH_THREAD_ROWS // 2], None, True),
        ([embeddings.SEARCH_THREAD_ROWS - 1], None, False),  # below: a thread hop costs more
        ([embeddings.SEARCH_THREAD_ROWS * 2], 42, False),  # a member's rows: few, on the loop
    ],
)
async def test_a_big_shared_pass_runs_off_the_loop_and_finds_the_same_rows(
    threads: list[int], indexes: list[int], subject: int | None, off_loop: bool
) -> None:
    rows = []
    start = 1
    for count in indexes:
        rows.append(_rows(count, start=start, subject=42 if subject else -1))
        start += count
    wanted = np.arange(1, 400, 7, dtype=np.int64)
    hits, cosines = await embeddings._search(rows, _question(), 20, subject, wanted)
    # the same rows as the pass on the loop (its blocks round the last bit differently)
    near, loaded = nearest_with_cosines(rows, _question(), 20, subject=subject, wanted=wanted)
    assert [h.item_id for h in hits] == [h.item_id for h in near]
    assert [h.cosine for h in hits] == pytest.approx([h.cosine for h in near], abs=1e-6)
    assert cosines == pytest.approx(loaded, abs=1e-6)
    assert len(hits) == 20 and len(cosines) == wanted.size
    assert (threads[0] != threading.get_ident()) is off_loop
