"""A memory row as the rest of the slice sees it: the stored record (`MemoryItem`), a row to
write (`NewMemory`) and what a write did (`WriteOutcome`). Reading and writing them is the
repository's job (`repository.py`); these are the values every other module passes around."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

WriteAction = Literal["added", "replaced", "contradicted", "duplicate"]


@dataclass(frozen=True, slots=True)
class MemoryItem:
    id: int
    bot_id: int
    scope: str
    kind: str
    key: str
    text: str
    origin: str
    created_at: float
    updated_at: float
    subject_user_id: int | None = None
    author_user_id: int | None = None
    subject_name: str = ""
    fingerprint: str = ""
    source: dict[str, Any] = field(default_factory=dict)
    last_access_at: float | None = None
    access_count: int = 0
    deleted_at: float | None = None
    delete_reason: str | None = None
    replaced_by: int | None = None
    # the model that made the row's vector (None: none, or an unknown model's). The vector
    # itself is not read with the row: only the vector index reads vectors (`vectors`), so
    # the reply path's candidate loads do not decode 512 floats a row
    embedding_model: str | None = None
    revision: int = 0  # moves with each change of the live row in place (see the row model)

    @property
    def ref(self) -> str:
        """The id used in traces, snapshots and admin commands."""
        return f"mem:{self.id}"


@dataclass(frozen=True, slots=True)
class NewMemory:
    bot_id: int
    scope: str
    kind: str
    key: str
    fingerprint: str
    text: str
    origin: str
    now: float
    subject_user_id: int | None = None
    author_user_id: int | None = None
    subject_name: str = ""
    source: dict[str, Any] = field(default_factory=dict)
    embedding: Sequence[float] | None = None
    embedding_model: str | None = None


@dataclass(frozen=True, slots=True)
class WriteOutcome:
    action: WriteAction
    item: MemoryItem
    replaced_ids: tuple[int, ...] = ()
    retired_texts: tuple[str, ...] = ()  # what the facts a newer one retired said
