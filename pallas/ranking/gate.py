"""The similarity gate of one retrieval: the similarity a candidate must reach, and why.

A block's `min_similarity` holds for a block of up to `gate_size` candidates. Above that, with
vectors, the gate rises by `gate_growth` × ln(candidates / `gate_size`). Why: whether a
question about something never said finds nothing is decided by the *best* of the member's
facts, and the best of more draws is higher. If a fact unrelated to the question passes a
gate g with a probability whose tail falls off exponentially, p(g) ∝ exp(−g / τ), the chance
that one of n facts passes is about n · p(g); it stays what it was at n₀ facts when
g(n) = g(n₀) + τ · ln(n / n₀). So `gate_growth` is that tail's scale, measured on the
never-said questions of the member-recall development half (the similarities of all their
facts: τ ≈ 0.04 at 50, 100 and 200 facts a member, `benchmarks.member_recall_gate`), not a
knob fitted to the outcome; `gate_size` is the size the fixed gate was tuned at.

With vectors the base is the block's `min_similarity_with_vectors` where it has one (its own
cosine share moves every similarity). The gate never falls below that base (a member with few
facts keeps the gate as it was), and it does not grow without vectors: the tail was measured
on the cosine fusion, and without vectors the similarity is BM25 or a concept share, whose
tail nobody measured.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pallas.ranking.weights import BlockRetrievalConfig

FIXED = "fixed"  # the block's gate does not grow (gate_growth 0)
NO_VECTORS = "no vectors"  # the growth needs cosines (see above)


@dataclass(frozen=True, slots=True)
class SimilarityGate:
    """The similarity a candidate must reach in one retrieval, and the rule that set it."""

    min_similarity: float
    reason: str


def similarity_gate(
    block: BlockRetrievalConfig, candidates: int, *, vectors: bool
) -> SimilarityGate:
    """The gate for a retrieval over `candidates` in-scope candidates (see the module)."""
    base, growth, size = block.min_similarity, block.gate_growth, block.gate_size
    if vectors and block.min_similarity_with_vectors is not None:
        base = block.min_similarity_with_vectors  # the block mixes the cosine its own way
    if growth <= 0:
        return SimilarityGate(base, FIXED)
    if not vectors:
        return SimilarityGate(base, NO_VECTORS)
    if candidates <= size:
        return SimilarityGate(base, f"{candidates} candidates <= {size}")
    gate = min(1.0, base + growth * math.log(candidates / size))
    return SimilarityGate(
        gate, f"{candidates} candidates: {base} + {growth} * ln({candidates}/{size})"
    )
