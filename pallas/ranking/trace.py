"""Why each candidate was or was not chosen: a retrieval's trace and its result.

`scoring` fills these; the turn's snapshot stores `RetrievalTrace.to_dict` (bounded: a block
over thousands of rows stays small), which the console's analyzer shows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pallas.ranking.candidate import MemoryCandidate
from pallas.ranking.candidate_score import CandidateScore
from pallas.ranking.gate import SimilarityGate


@dataclass(frozen=True, slots=True)
class RetrievalTrace:
    """Why each candidate was or was not chosen.

    `candidates` holds every candidate that was scored (sharing a term, a concept class or a
    vector score with the query), best first; in-scope candidates sharing nothing had
    similarity 0 and appear only in `dropped_by_similarity`. `considered` counts every
    in-scope candidate. The stored form (`to_dict`) is bounded: see `TRACE_CANDIDATES`.
    """

    kind: str
    query: str
    query_tokens: tuple[str, ...]
    candidates: tuple[CandidateScore, ...]  # best first
    chosen_ids: tuple[str, ...]
    dropped_by_scope: tuple[str, ...] = ()
    dropped_by_similarity: tuple[str, ...] = ()
    dropped_by_threshold: tuple[str, ...] = ()
    dropped_by_top_k: tuple[str, ...] = ()
    dropped_by_cap: tuple[str, ...] = ()
    # past the gate but about someone the question does not ask about (`subjects`)
    dropped_by_subject: tuple[str, ...] = ()
    # past the gate but naming another instance of a class than the question (`instances`)
    dropped_by_instance: tuple[str, ...] = ()
    # past the gate but telling no number for a question asking one (`answer_type`)
    dropped_by_answer_type: tuple[str, ...] = ()
    chars: int = 0
    considered: int = 0  # in-scope candidates ranked (scored or similarity 0)
    gate: SimilarityGate | None = None  # the similarity gate applied, and why (`gate`)

    def to_dict(self) -> dict[str, Any]:
        """The trace stored with the turn's snapshot (shown by the console's analyzer).

        Bounded so a block over thousands of rows stays small: the best `TRACE_CANDIDATES`
        scored candidates (and every chosen one) with their scores, each dropped-by list cut
        to its first `TRACE_IDS` ids; `scored`, `matched` and `dropped` give the full counts.
        """
        shown = list(self.candidates[:TRACE_CANDIDATES])
        if missing := set(self.chosen_ids).difference(c.id for c in shown):  # chosen further down
            shown += [c for c in self.candidates[TRACE_CANDIDATES:] if c.id in missing]
        dropped = {
            "scope": self.dropped_by_scope,
            "similarity": self.dropped_by_similarity,
            "threshold": self.dropped_by_threshold,
            "top_k": self.dropped_by_top_k,
            "cap": self.dropped_by_cap,
            "subject": self.dropped_by_subject,
            "instance": self.dropped_by_instance,
            "answer_type": self.dropped_by_answer_type,
        }
        out: dict[str, Any] = {
            "kind": self.kind,
            "query": self.query,
            "candidates": [_candidate_dict(c) for c in shown],
            "scored": max(self.considered, len(self.candidates)),
            "matched": len(self.candidates),
            "chosen": list(self.chosen_ids),
            "dropped": {name: len(ids) for name, ids in dropped.items()},
        }
        out.update({f"dropped_by_{name}": list(ids[:TRACE_IDS]) for name, ids in dropped.items()})
        out["chars"] = self.chars
        if self.gate is not None:
            out["gate"] = {"min_similarity": round(self.gate.min_similarity, 4),
                           "reason": self.gate.reason}  # fmt: skip
        return out


TRACE_CANDIDATES = 10  # scored candidates kept in a stored trace (plus every chosen one)
TRACE_IDS = 20  # ids kept per dropped-by list in a stored trace (the counts are complete)


def _candidate_dict(c: CandidateScore) -> dict[str, Any]:
    return {  # the always-set floats rounded inline: ~10 of these per retrieval, every turn
        "id": c.id,
        "bm25": _r(c.bm25),
        "embedding": _r(c.embedding),
        "concept": _r(c.concept),
        "sim": round(c.similarity, 4),
        "recency": round(c.recency, 4),
        "freq": round(c.frequency, 4),
        "score": round(c.score, 4),
        "gated": c.gated,
    }


def _r(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


@dataclass(frozen=True, slots=True)
class RetrievalResult:
    chosen: tuple[MemoryCandidate, ...]  # best first
    trace: RetrievalTrace

    @property
    def ids(self) -> tuple[str, ...]:
        return self.trace.chosen_ids
