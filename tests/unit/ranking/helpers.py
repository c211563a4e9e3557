"""A member's person facts as retrieval candidates, for the ranking rules' tests."""

from __future__ import annotations

from pallas.ranking import MemoryCandidate

NOW = 1_760_000_000.0
SCOPE = "group:1:100"


def facts(*texts: str) -> list[MemoryCandidate]:
    """`texts` as person facts of one scope, ids f0, f1, … in order, taught now."""
    return [
        MemoryCandidate(id=f"f{i}", text=text, scope=SCOPE, kind="person_facts", created_at=NOW)
        for i, text in enumerate(texts)
    ]
