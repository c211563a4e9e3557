"""Which facts a newer one replaced: the audit a member or admin reads when a fact "vanished".

A fact retired by a newer one ("住在朝阳" after "住在海淀区") keeps its row, soft-deleted with
`replaced_by` naming the new fact and the reason saying what decided it (``model:update``,
``model:deny``, ``rule:update``, ``rule:deny``, ``meaning:update`` (no model answered: the
offline encoder chose); ``model:consolidate`` when the cheap model
consolidating the member's profile judged it outdated; ``replaced`` for a same-key write,
and the older ``replaced`` / ``contradicted`` rows). A denial ("已经不住海淀了") is itself kept only
as history: its row is soft-deleted as ``denial`` and still shown here as what replaced the
fact. `retired_items` pairs each with its replacement, newest first, for `/pallas memory
history` and the console's memory page.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from pallas.features.memory.records import MemoryItem
from pallas.features.memory.repository import MemoryRepository

HISTORY_LIMIT = 20


@dataclass(frozen=True, slots=True)
class Retired:
    """An old fact and the newer one that replaced it (None when it cannot be shown here)."""

    old: MemoryItem
    new: MemoryItem | None

    @property
    def reason_zh(self) -> str:
        reason = self.old.delete_reason or ""
        denied = reason == "contradicted" or reason.endswith(":deny")
        what = "被新说法否定" if denied else "被新说法替换"
        if reason.endswith(":consolidate"):
            what = "整理档案时" + what
        by = {"model": "（模型判断）", "rule": "（规则判断）", "meaning": "（按意思判断）"}.get(
            reason.split(":", 1)[0], ""
        )
        return what + by


async def retired_items(
    repo: MemoryRepository,
    scopes: Collection[str],
    *,
    subject_user_id: int | None = None,
    limit: int = HISTORY_LIMIT,
) -> list[Retired]:
    old = await repo.list_items(
        scopes=scopes, subject_user_id=subject_user_id, replaced_only=True, limit=limit
    )
    new_ids = {i.replaced_by for i in old if i.replaced_by is not None}
    by_id = {i.id: i for i in await repo.get_many(new_ids)}
    for missing in new_ids - by_id.keys():  # replaced in turn since: still show what it said
        if (item := await repo.get(missing)) is not None:
            by_id[item.id] = item
    scoped = set(scopes)
    return [Retired(item, _same_scope(by_id.get(item.replaced_by or 0), scoped)) for item in old]


def _same_scope(item: MemoryItem | None, scopes: set[str]) -> MemoryItem | None:
    """Never show a replacement from outside the scopes asked about."""
    return item if item is not None and item.scope in scopes else None
