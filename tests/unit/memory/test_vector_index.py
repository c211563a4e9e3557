"""The vector index: nearest rows first, subject filter, deletions, dimension changes."""

from __future__ import annotations

import struct
from unittest.mock import patch

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pallas.ranking import vector_index
from pallas.ranking.vector_index import VectorIndex, nearest_with_cosines, unit


def _index() -> VectorIndex:
    index = VectorIndex()
    index.add(
        [
            (1, 10, [1.0, 0.0, 0.0]),
            (2, 20, [0.9, 0.1, 0.0]),
            (3, 10, [0.0, 1.0, 0.0]),
            (4, None, [0.0, 0.0, 1.0]),
            (5, 10, [0.0, 0.0, 0.0]),  # zero vector: never indexed
        ]
    )
    return index


def test_nearest_rows_come_first_and_unrelated_ones_not_at_all() -> None:
    hits = _index().search([1.0, 0.05, 0.0], 10)
    assert [h.item_id for h in hits] == [1, 2, 3]  # 4 is orthogonal (cosine 0): left out
    assert hits[0].cosine > hits[1].cosine > hits[2].cosine > 0


def test_a_subject_sees_only_its_own_rows() -> None:
    assert [h.item_id for h in _index().search([1.0, 0.05, 0.0], 10, subject=20)] == [2]


def test_rows_no_longer_live_are_dropped() -> None:
    index = _index()
    assert index.keep_only([2, 3, 4]) == 1
    assert [h.item_id for h in index.search([1.0, 0.0, 0.0], 10)] == [2]
    assert index.cosines([1.0, 0.0, 0.0], [1, 2]) == {2: index.cosines([1, 0, 0], [2])[2]}


def test_vectors_of_another_dimension_are_ignored() -> None:
    index = _index()
    assert index.add([(9, None, [1.0, 0.0])]) == 0
    assert index.search([1.0, 0.0], 5) == []
    assert len(index) == 4


def test_a_snapshot_is_not_changed_by_a_later_refresh() -> None:
    # a search on the encoder's thread reads a snapshot while the loop refreshes the index
    index = _index()
    before = index.rows
    index.keep_only([3])
    index.add([(6, None, [1.0, 0.0, 0.0])])
    q = unit([1.0, 0.05, 0.0])
    assert q is not None
    hits, _ = nearest_with_cosines([before], q, 10, subject=None, wanted=())
    assert [h.item_id for h in hits] == [1, 2, 3]
    hits, _ = nearest_with_cosines([index.rows], q, 10, subject=None, wanted=())
    assert [h.item_id for h in hits] == [6, 3]


@pytest.mark.parametrize("subject", [None, 10, 20])
def test_one_pass_gives_the_nearest_rows_and_the_loaded_rows_cosines(subject: int | None) -> None:
    index, other = _index(), VectorIndex()
    other.add([(7, 10, [0.7, 0.7, 0.0])])
    query = [1.0, 0.05, 0.0]
    q = unit(query)
    assert q is not None
    hits, cosines = nearest_with_cosines(
        [index.rows, other.rows], q, 2, subject=subject, wanted=[1, 3, 4, 7, 99]
    )
    expected = sorted(
        index.search(query, 2, subject=subject) + other.search(query, 2, subject=subject),
        key=lambda h: (-h.cosine, h.item_id),
    )[:2]
    assert hits == expected
    separate = {**index.cosines(query, [1, 3, 4, 7, 99]), **other.cosines(query, [7])}
    assert cosines == pytest.approx(separate)
    assert set(cosines) == {1, 3, 4, 7}  # 99 is in no index


def _stored(vector: list[float]) -> bytes:
    return struct.pack(f"<{len(vector)}f", *vector)  # as `Float32Vector` stores it


ROWS = [
    (1, 10, [1.0, 0.0, 0.0]),
    (2, 20, [0.9, 0.1, 0.0]),
    (3, 10, [0.0, 1.0, 0.0]),
    (4, None, [0.0, 0.0, 1.0]),
    (5, 10, [0.0, 0.0, 0.0]),  # zero: never indexed
    (6, 10, [1.0, 0.0]),  # another dimension: skipped
    (7, 10, [float("nan"), 1.0, 0.0]),  # not a vector: skipped
]


# values a float32 squares without under- or overflow (zero vectors included)
_value = st.integers(-8000, 8000).map(lambda n: n / 8)
_vector = st.lists(_value, min_size=4, max_size=4)


@given(st.lists(_vector, max_size=30), _vector)
def test_stored_bytes_index_as_decoded_floats_do(
    vectors: list[list[float]], query: list[float]
) -> None:
    """The start-up build from stored bytes (one numpy pass) ranks as the row-by-row one."""
    by_floats, by_bytes = VectorIndex(), VectorIndex()
    by_floats.add([(i, i % 3 or None, v) for i, v in enumerate(vectors)])
    by_bytes.add_stored([(i, i % 3 or None, _stored(v)) for i, v in enumerate(vectors)])
    assert by_bytes.rows.ids.tolist() == by_floats.rows.ids.tolist()
    assert by_bytes.rows.subjects.tolist() == by_floats.rows.subjects.tolist()
    np.testing.assert_allclose(by_bytes.rows.matrix, by_floats.rows.matrix, atol=1e-6)
    if unit(query) is not None:
        assert [h.item_id for h in by_bytes.search(query, 5)] == [
            h.item_id for h in by_floats.search(query, 5)
        ]


def test_stored_rows_that_are_no_vectors_are_skipped() -> None:
    index = VectorIndex()
    assert index.add_stored([(i, s, _stored(v)) for i, s, v in ROWS]) == 4
    assert sorted(index.ids) == [1, 2, 3, 4]
    assert [h.item_id for h in index.search([1.0, 0.05, 0.0], 10, subject=10)] == [1, 3]
    assert index.add_stored([(8, None, _stored([0.0, 1.0]))]) == 0  # the index's dims hold
    assert index.add_stored([]) == 0


def test_a_broken_first_row_does_not_decide_the_dimension() -> None:
    index = VectorIndex()
    rows = [(1, None, b"\x00\x01\x02"), (2, None, _stored([0.0, 2.0])), (3, 7, _stored([1.0, 0.0]))]
    assert index.add_stored(rows) == 2
    assert [h.item_id for h in index.search([0.0, 1.0], 5)] == [2]


@settings(max_examples=40, deadline=None)
@given(
    rows=st.integers(0, 700),
    parts=st.integers(1, 4),
    dims=st.sampled_from([8, 64, 512]),
    seed=st.integers(0, 2**16),
)
def test_the_blocked_pass_finds_what_one_product_finds(
    rows: int, parts: int, dims: int, seed: int
) -> None:
    """`_best` multiplies by cache-sized blocks (faster); a row's best cosine over a question's
    parts is the one a single product gives, over block boundaries and a last short block."""
    rng = np.random.default_rng(seed)
    matrix = rng.standard_normal((rows, dims)).astype(np.float32)
    matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
    q = rng.standard_normal((parts, dims)).astype(np.float32)
    q /= np.linalg.norm(q, axis=1, keepdims=True)  # unit rows, as the index and questions are
    with patch.object(vector_index, "CHUNK_BYTES", 64 * dims * 4):  # 64-row blocks
        blocked = vector_index._best(matrix, q)
    whole = vector_index._best(matrix, q, one_call=True)
    expected = (q @ matrix.T).max(axis=0) if rows else np.zeros(0, dtype=np.float32)
    assert blocked.shape == (rows,) and blocked.dtype == np.float32
    # float32 sums in another order: cosines agree to ~1e-7, never to the last bit
    np.testing.assert_allclose(blocked, expected, rtol=0, atol=1e-5)
    np.testing.assert_allclose(whole, expected, rtol=0, atol=1e-5)
