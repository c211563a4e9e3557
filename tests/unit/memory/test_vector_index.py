"""The vector index: nearest rows first, subject filter, deletions, dimension changes."""

from __future__ import annotations

import pytest

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
