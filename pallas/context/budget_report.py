"""What the limiter did to one draft (`BudgetReport`, one `TrimRecord` per cut).

Its own module so the draft (`pipeline.PromptDraft.budget_report`) can carry the report
without the pipeline engine importing the limiter, which builds on the pipeline.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TrimRecord:
    target: str  # "message" | "section"
    item_id: str  # source_token (messages) or section id (sections)
    kind: str  # message kind or section id
    action: str  # "dropped" | "truncated"
    chars_removed: int
    tokens_removed: int
    reason: str  # "char_budget" | "token_budget" | "char_budget+token_budget"


@dataclass(frozen=True, slots=True)
class BudgetReport:
    char_budget: int
    token_budget: int | None
    chars_before: int
    chars_after: int
    tokens_before: int
    tokens_after: int
    trims: tuple[TrimRecord, ...] = ()
    over_budget: bool = False  # protected content alone exceeds a limit
    elapsed_ms: float = 0.0

    @property
    def dropped_source_tokens(self) -> tuple[str, ...]:
        return tuple(
            t.item_id for t in self.trims if t.target == "message" and t.action == "dropped"
        )
