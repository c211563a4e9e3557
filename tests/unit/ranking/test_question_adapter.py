"""The question adapter (issue #47): the shipped file fits the local encoder, and a reweighted
question scores every row as `q · row + offset`, clipped to 0..1, in both the nearest rows and
the loaded rows' cosines, for a scope's rows and for one member's."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pallas.ranking import IndexRows, QuestionAdapter, load_question_adapters, nearest_with_cosines
from pallas.ranking.adapter import DATA_FILE


def rows(vectors: list[list[float]], subjects: list[int]) -> IndexRows:
    matrix = np.asarray(vectors, dtype=np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    ids = np.arange(1, len(vectors) + 1, dtype=np.int64)
    return IndexRows(ids, np.asarray(subjects, dtype=np.int64), matrix, matrix.shape[1])


def test_the_shipped_adapter_is_for_the_local_encoder() -> None:
    from pallas.providers.sentence_encoder import load_local_encoder

    encoder = load_local_encoder()
    if encoder is None:
        pytest.skip("the local sentence encoder is not installed")
    adapter = load_question_adapters()[encoder.model_id]
    assert adapter.weights.shape == (encoder.dim,)
    assert adapter.weights.dtype == np.float32
    assert np.isfinite(adapter.weights).all()
    assert -1.0 < adapter.offset < 1.0


def test_no_file_no_adapter(tmp_path: Path) -> None:
    assert load_question_adapters(tmp_path / "none.npz") == {}
    assert DATA_FILE.is_file()


INDEX = rows([[1, 0, 0], [0.8, 0.6, 0], [0, 1, 0], [0, 0, 1], [-1, 0, 0]], [5, 5, 6, 5, 5])
WANTED = np.arange(1, 6, dtype=np.int64)


@pytest.mark.parametrize("subject", [None, 5])
@pytest.mark.parametrize(
    ("weights", "offset"),
    [([1.0, 1.0, 1.0], 0.0), ([0.5, 2.0, 1.0], 0.0), ([0.5, 2.0, 1.0], 0.2), ([1, 1, 1], -0.3)],
)
def test_an_adapted_question_scores_rows_by_the_affine_map(
    weights: list[float], offset: float, subject: int | None
) -> None:
    adapter = QuestionAdapter("enc@1", np.asarray(weights, dtype=np.float32), offset)
    q = np.asarray([0.6, 0.8, 0.0], dtype=np.float32)
    hits, cosines = nearest_with_cosines([INDEX], adapter.question(q), 5, subject=subject,
                                         wanted=WANTED, offset=adapter.offset)  # fmt: skip
    expected = np.clip(INDEX.matrix @ (q * np.asarray(weights)) + offset, 0.0, 1.0)
    for item_id, cosine in cosines.items():
        assert cosine == pytest.approx(float(expected[item_id - 1]), abs=1e-6)
    mine = [i for i in range(1, 6) if subject is None or INDEX.subjects[i - 1] == subject]
    assert set(cosines) == set(range(1, 6))  # a loaded row of someone else still gets one
    best = sorted((i for i in mine if expected[i - 1] > 0), key=lambda i: -expected[i - 1])
    assert [h.item_id for h in hits] == best
