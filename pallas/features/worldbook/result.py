"""Worldbook activation results: activated entries with provenance, skips, trace."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pallas.features.worldbook.model import WorldbookEntry, WorldbookPosition, WorldbookState


@dataclass(frozen=True, slots=True)
class ActivatedEntry:
    entry: WorldbookEntry
    reason: str  # "constant" | "key" | "sticky"
    step: int  # 0 = initial scan, n = n-th recursion pass
    tokens: int
    matched_key: str | None = None
    matched_in: str | None = None  # "messages" | "recursion"
    matched_secondary: tuple[str, ...] = ()

    @property
    def key_id(self) -> str:
        return self.entry.key_id

    @property
    def position(self) -> WorldbookPosition:
        return self.entry.position


@dataclass(frozen=True, slots=True)
class SkippedEntry:
    key_id: str
    reason: str  # see SKIP_REASONS
    detail: str = ""
    step: int = 0


SKIP_REASONS = (
    "disabled",
    "empty_content",
    "no_keys",
    "delay",
    "cooldown",
    "delay_until_recursion",
    "exclude_recursion",
    "no_primary_match",
    "secondary_logic",
    "group_lost",
    "group_already_active",
    "probability",
    "budget",
    "book_step_limit",
)


@dataclass(frozen=True, slots=True)
class ActivationTrace:
    turn_index: int
    chat_length: int
    passes: int
    budget_tokens: int
    used_tokens: int
    budget_exhausted: bool
    step_limit_reached: bool
    rolls: tuple[tuple[str, float, float], ...] = ()  # (key_id, roll 0..100, probability)
    group_decisions: tuple[tuple[str, str, str], ...] = ()  # (group, winner key_id, how)


@dataclass(frozen=True, slots=True)
class ActivationResult:
    activated: tuple[ActivatedEntry, ...]  # render order: ascending `order`
    state: WorldbookState
    skipped: tuple[SkippedEntry, ...]
    trace: ActivationTrace

    def at(self, position: WorldbookPosition) -> tuple[ActivatedEntry, ...]:
        return tuple(a for a in self.activated if a.position == position)

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(a.key_id for a in self.activated)

    def skip_reason(self, key_id: str) -> str | None:
        return next((s.reason for s in self.skipped if s.key_id == key_id), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "activated": [
                {
                    "id": a.key_id,
                    "source": a.entry.source_token,
                    "reason": a.reason,
                    "key": a.matched_key,
                    "in": a.matched_in,
                    "step": a.step,
                    "tokens": a.tokens,
                    "position": a.position.value,
                }
                for a in self.activated
            ],
            "skipped": [
                {"id": s.key_id, "reason": s.reason, "detail": s.detail} for s in self.skipped
            ],
            "budget": [self.trace.used_tokens, self.trace.budget_tokens],
            "passes": self.trace.passes,
        }
