"""One scored candidate of a retrieval (`scoring`), as the trace and the vetoes read it."""

from __future__ import annotations

from typing import NamedTuple


class CandidateScore(NamedTuple):
    """One scored candidate (a named tuple: hundreds are built per retrieval, and a frozen
    dataclass's `__init__` costs about four times as much)."""

    id: str
    bm25: float | None
    embedding: float | None
    similarity: float
    recency: float
    frequency: float
    score: float  # 0.0 when gated out
    chars: int
    gated: bool = False  # similarity below the retrieval's gate: never retrieved
    concept: float | None = None  # share of the question's semantic classes (see concepts)
