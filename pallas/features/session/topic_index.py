"""A member's kept topics in the form retrieval scores: candidates, scope filter, BM25 index.

Built from the rows `TopicCache` keeps for a member (see `warm_topics`) when they change — a
topic archived, the rows reloaded, a recall's access counts applied, another live summary
excluded — and reused by every turn in between, which then only scores
(`scoring.retrieve_prepared`). The result is exactly what `retrieve` over
`topic_candidates(rows, exclude_text=...)` gives: the same candidates in the same order, the
same scope filter, an index of the same ids and texts.

A recall changes only access counts and last-access times: the candidates are rebuilt (they
carry those), the index of the same ids and texts is kept.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from pallas.features.session.repository import SessionTopic
from pallas.ranking import CandidateIndex, MemoryCandidate, PreparedCandidates, prepare_candidates

KIND = "old_topics"


def topic_id(row_id: int) -> str:
    return f"topic:{row_id}"


def topic_candidates(
    topics: Sequence[SessionTopic], *, exclude_text: str = ""
) -> list[MemoryCandidate]:
    """Retrieval candidates for the topics (the live summary's text excluded)."""
    return [
        MemoryCandidate(
            id=topic_id(t.row_id),
            text=t.text,
            scope=t.scope,
            kind=KIND,
            created_at=t.created_at,
            last_access_at=t.last_access_at,
            access_count=t.access_count,
            subject_user_id=t.user_id,
            source=f"session_topic:{t.row_id}",
        )
        for t in topics
        if t.text.strip() and t.text.strip() != exclude_text
    ]


@dataclass(frozen=True, slots=True)
class PreparedTopics:
    rows: Sequence[SessionTopic]  # the kept rows it was built from (held: identity = unchanged)
    exclude_text: str
    allowed: frozenset[str]
    candidates: PreparedCandidates  # in scope, de-duplicated, with the index of `bm25`
    by_id: dict[str, SessionTopic]  # every row by candidate id
    bm25: tuple[float, float]  # (k1, b) of the index built

    def fits(
        self,
        rows: Sequence[SessionTopic],
        exclude_text: str,
        allowed: frozenset[str],
        bm25: tuple[float, float],
    ) -> bool:
        return (
            self.rows is rows
            and self.exclude_text == exclude_text
            and self.allowed == allowed
            and self.bm25 == bm25
        )


def prepare_topics(
    rows: Sequence[SessionTopic],
    *,
    exclude_text: str,
    allowed: Collection[str],
    k1: float,
    b: float,
    previous: PreparedTopics | None = None,
) -> PreparedTopics:
    """The prepared form of `rows`; the index of `previous` is kept when it covers the same
    ids and texts (a recall changed only the counts)."""
    allowed_set = frozenset(allowed)
    candidates = prepare_candidates(topic_candidates(rows, exclude_text=exclude_text), allowed_set)
    ids = [c.id for c in candidates.kept]
    texts = [c.index_text for c in candidates.kept]
    index = previous.candidates.indexes.get((k1, b)) if previous is not None else None
    if index is None or index.ids != tuple(ids) or index.texts != tuple(texts):
        index = CandidateIndex(ids, texts, k1, b)
    candidates.indexes[(k1, b)] = index
    by_id = {topic_id(t.row_id): t for t in rows}
    return PreparedTopics(rows, exclude_text, allowed_set, candidates, by_id, (k1, b))
