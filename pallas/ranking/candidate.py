"""`MemoryCandidate`: one retrievable row as scoring and the prepared-candidate cache see it.

A module of its own: both `scoring` and `prepared` (which `scoring` builds on) hold candidates.
"""

from __future__ import annotations

from dataclasses import dataclass

from pallas.core.clock import DAY_S


@dataclass(frozen=True, slots=True)
class MemoryCandidate:
    """One retrievable row (memory, event, knowledge, note, fact, topic), already loaded."""

    id: str
    text: str
    scope: str  # group scope or pool scope, see `isolation`
    kind: str  # block kind, e.g. "group_memory"
    created_at: float  # unix seconds
    last_access_at: float | None = None  # None = never retrieved; created_at is used instead
    access_count: int = 0
    subject_user_id: int | None = None
    source: str = ""  # message ids or command that produced it
    expansion: str = ""  # keywords / category / questions stored with the fact (index only)

    @property
    def index_text(self) -> str:
        """What retrieval matches against: the fact plus its stored expansion."""
        return f"{self.text} {self.expansion}" if self.expansion else self.text

    def days_since_access(self, now: float) -> float:
        last = self.last_access_at if self.last_access_at is not None else self.created_at
        return max(0.0, (now - last) / DAY_S)
