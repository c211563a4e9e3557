"""The similarity gate grows with the number of candidates (issue #47): a member with 200 facts
has a never-said question's best unrelated fact scoring higher than one with 50, so the same
fixed gate let more of those questions find something (`pallas.ranking.gate`)."""

from __future__ import annotations

import math

import pytest

from pallas.ranking import (
    BlockRetrievalConfig,
    MemoryCandidate,
    ScoringConfig,
    retrieve,
    similarity_gate,
)
from pallas.ranking.gate import FIXED, NO_VECTORS

NOW = 1_760_000_000.0
SCOPE = "group:1:100"


def block(
    min_similarity: float = 0.35, growth: float = 0.04, size: int = 50
) -> BlockRetrievalConfig:
    return BlockRetrievalConfig(min_similarity=min_similarity, gate_growth=growth, gate_size=size)


@pytest.mark.parametrize(
    ("config", "candidates", "vectors", "gate", "reason"),
    [
        # up to the reference size: the configured gate
        (block(), 10, True, 0.35, "10 candidates <= 50"),
        (block(), 50, True, 0.35, "50 candidates <= 50"),
        # above it: + growth × ln(candidates / size)
        (block(), 51, True, 0.35 + 0.04 * math.log(51 / 50), "51 candidates: 0.35 + 0.04"),
        (block(), 100, True, 0.35 + 0.04 * math.log(2), "100 candidates: 0.35 + 0.04"),
        (block(), 200, True, 0.35 + 0.04 * math.log(4), "200 candidates: 0.35 + 0.04"),
        (block(min_similarity=0.2, growth=0.1, size=10), 100, True, 0.2 + 0.1 * math.log(10), ""),
        # never above 1
        (block(min_similarity=0.9, growth=0.5, size=1), 10**6, True, 1.0, ""),
        # no growth configured, or no vectors: the configured gate whatever the number
        (block(growth=0.0), 5000, True, 0.35, FIXED),
        (block(), 5000, False, 0.35, NO_VECTORS),
        (block(), 0, True, 0.35, "0 candidates <= 50"),
    ],
)
def test_the_gate_grows_with_the_candidates_only_past_the_reference_size(
    config: BlockRetrievalConfig, candidates: int, vectors: bool, gate: float, reason: str
) -> None:
    found = similarity_gate(config, candidates, vectors=vectors)
    assert found.min_similarity == pytest.approx(gate)
    assert found.reason.startswith(reason)


def test_person_facts_grow_by_default_and_other_blocks_do_not() -> None:
    config = ScoringConfig()
    grown = similarity_gate(config.block("person_facts"), 200, vectors=True)
    assert grown.min_similarity == pytest.approx(0.43 + 0.04 * math.log(4))  # ≈ 0.485
    # without vectors the similarity is BM25 or a class share: the gate of that scale
    plain = similarity_gate(config.block("person_facts"), 200, vectors=False)
    assert (plain.min_similarity, plain.reason) == (0.35, NO_VECTORS)
    for kind in ("group_memory", "teachings", "knowledge", "relationship", "old_topics"):
        fixed = similarity_gate(config.block(kind), 5000, vectors=True)
        assert fixed.reason == FIXED, kind


def member(n: int) -> list[MemoryCandidate]:
    return [
        MemoryCandidate(
            id=f"f{i}",
            text=f"fact {i}",
            scope=SCOPE,
            kind="person_facts",
            created_at=NOW,
            last_access_at=None,
            access_count=0,
        )
        for i in range(n)
    ]


# the question shares no word and no concept class with the facts: similarity = 0.9 × cosine
# (person facts' own mix)
QUESTION = "qqq"


@pytest.mark.parametrize(
    ("facts", "cosine", "found"),
    [
        # a never-said question's nearest fact at similarity 0.45 (cosine 0.5): past the gate
        # with 50 facts (0.43), not with 200 (0.485) — the fixed gate let it through at 200
        (50, 0.5, True),
        (200, 0.5, False),
        # the fact asked for, at similarity 0.58 (cosine 0.643): found at both sizes
        (50, 0.643, True),
        (200, 0.643, True),
    ],
)
def test_a_member_with_many_facts_needs_a_nearer_fact(
    facts: int, cosine: float, found: bool
) -> None:
    rows = member(facts)
    scores = {r.id: 0.1 for r in rows} | {"f7": cosine}
    result = retrieve(QUESTION, rows, kind="person_facts", now=NOW, allowed_scopes={SCOPE},
                      semantic_scores=scores)  # fmt: skip
    assert (result.ids == ("f7",)) is found
    assert result.trace.to_dict()["gate"]["reason"].startswith(f"{facts} candidates")


def test_without_vectors_the_gate_stays_as_configured() -> None:
    result = retrieve("fact", member(200), kind="person_facts", now=NOW, allowed_scopes={SCOPE})
    gate = result.trace.to_dict()["gate"]
    assert gate == {"min_similarity": 0.35, "reason": NO_VECTORS}
