"""A member's new fact retires the older ones it updates or denies: the write-side step of
`MemoryService.remember` for person facts (what decides is in `judgement` and `denials`).

The ids of a model's judgement must be live facts of the same member, scope and kind (others
are dropped and logged; a judgement left without any gives way to the rules). A denial keeps the
new row only as history: it is soft-deleted as ``denial`` in the transaction that retires the
facts it denies, so the bare negation is never injected, not even between two writes.
Retired rows keep `replaced_by` and the reason that decided (`Judgement.retire_reason`:
``model:update`` … ``rule:deny``).
"""

from __future__ import annotations

import logging
from dataclasses import replace

from pallas.features.memory.denials import rule_update
from pallas.features.memory.judgement import Judgement
from pallas.features.memory.records import WriteAction, WriteOutcome
from pallas.features.memory.repository import MemoryRepository

log = logging.getLogger("pallas.memory")


async def retire_superseded(
    repo: MemoryRepository, now: float, outcome: WriteOutcome, judged: Judgement | None
) -> WriteOutcome:
    """Retire what the stored `outcome.item` updates or denies, as `judged` or the rules say."""
    new = outcome.item
    live = await repo.candidates(
        [new.scope], new.kind, subject_user_id=new.subject_user_id, limit=500
    )
    others = {i.id: i for i in live if i.id != new.id}
    decision = judged
    if decision is not None and decision.op != "add":
        valid = tuple(i for i in decision.retire_ids if i in others)
        if len(valid) < len(decision.retire_ids):
            log.info(
                "memory %s: %s ignored ids %s (not this member's live facts here)",
                new.ref, decision.retire_reason, sorted(set(decision.retire_ids) - set(valid)),
            )  # fmt: skip
        decision = replace(decision, retire_ids=valid) if valid else None
    if decision is None:
        decision = rule_update(new.text, [(i.id, i.text) for i in others.values()])
    if decision.op == "add" or not decision.retire_ids:
        return outcome
    reason = decision.retire_reason
    gone = await repo.retire(
        decision.retire_ids, now=now, reason=reason, replaced_by=new.id,
        denial=decision.op == "deny",
    )  # fmt: skip
    for old_item in gone:  # the audit line: which fact replaced which, in their words
        log.info(
            "memory %s %s %s (%s): %r -> %r", new.ref, reason, old_item.ref,
            decision.reason, old_item.text, new.text,
        )  # fmt: skip
    if not gone:
        return outcome
    action: WriteAction = "contradicted" if decision.op == "deny" else "replaced"
    return WriteOutcome(
        action,
        new,
        outcome.replaced_ids + tuple(i.id for i in gone),
        retired_texts=tuple(i.text for i in gone),
    )
