"""How deep a retrieval reads into the vector index: twice its block's top-k, at least 8,
never more than `vector_k` (each row found beyond the window is read and scored every turn)."""

from __future__ import annotations

import pytest

from pallas.features.memory.config import RetrievalConfig
from pallas.features.memory.embeddings import vector_depth


@pytest.mark.parametrize(
    ("vector_k", "top_k", "depth"),
    [
        (20, 3, 8),  # knowledge: three rows shown, eight read
        (20, 5, 10),  # group memory
        (20, 6, 12),  # relationship notes
        (20, 16, 20),  # person facts: capped by vector_k
        (20, 1, 8),  # at least eight whatever the block shows
        (5, 3, 5),  # an operator's smaller vector_k wins
        (0, 3, 0),  # 0: the window only
        (500, 100, 200),
    ],
)
def test_depth(vector_k: int, top_k: int, depth: int) -> None:
    assert vector_depth(vector_k, top_k) == depth


def test_every_default_block_reads_at_least_its_own_top_k() -> None:
    config = RetrievalConfig()
    for kind in ("group_memory", "knowledge", "person_facts", "relationship", "teachings"):
        top_k = config.block(kind).top_k
        assert top_k <= vector_depth(config.vector_k, top_k) <= config.vector_k, kind
