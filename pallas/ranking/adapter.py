"""A learned reweighting of the local encoder's dimensions for a question about a member's facts
(issue #47).

The encoder was trained for sentence similarity, not for "which of my facts answers this
question": a never-said question's nearest fact and a real question's own fact overlap in
cosine. `benchmarks/fit_question_adapter.py` fits, on the development sets only, one weight per
dimension (w = 1 + d, d held near 0) and an affine map back onto the cosine's scale, so that a
question's score against each fact is

    offset + Σᵢ weightᵢ · qᵢ · fᵢ   (weights = scale · w)

— the stored fact vectors are untouched (no re-embedding): only the question's vector is
reweighted, once per retrieval, and the offset added before the scores are clipped to 0..1
(`vector_index`). The data file names the model it was fitted for; another model (a provider's,
a new encoder release) gets no adapter, and the plain cosine."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pallas.ranking.vector_index import Vector

DATA_FILE = Path(__file__).parent / "data" / "question_adapter.npz"


@dataclass(frozen=True, slots=True)
class QuestionAdapter:
    model_id: str  # the encoder (model@version) it was fitted for
    weights: Vector  # (dims,) float32: the scale folded in
    offset: float  # added to every score before the clip

    def question(self, q: Vector) -> Vector:
        """`q` (one unit vector, or one per row) reweighted: its dot with a fact's unit vector,
        plus `offset`, is the adapted score."""
        adapted: Vector = (q * self.weights).astype(np.float32, copy=False)
        return adapted


def load_question_adapters(path: Path = DATA_FILE) -> dict[str, QuestionAdapter]:
    """The shipped adapters by model id (empty when the file is absent)."""
    if not path.is_file():
        return {}
    with np.load(path, allow_pickle=False) as data:
        model_id = str(data["model_id"])
        weights = np.ascontiguousarray(data["weights"], dtype=np.float32)
        offset = float(data["offset"])
    return {model_id: QuestionAdapter(model_id, weights, offset)}


__all__ = ["DATA_FILE", "QuestionAdapter", "load_question_adapters"]
