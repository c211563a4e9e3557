"""What a new fact does to a member's stored facts: add, update (replace) or deny — the value
the model's answer and the offline rules both produce, and the checks a model's refs pass.

The model sees the member's live facts as short refs ("f1", "f2"); what it answers is never
trusted: `resolve_refs` keeps a ref only when it is one of the facts listed *for the same
member in the same scope*, and says why each other ref was dropped. An op that is not one of
the three is no judgement at all (the rules decide).

Retirement reasons name what decided: ``model:update`` / ``model:deny`` / ``rule:update`` /
``rule:deny`` (`retire_reason`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    from pallas.features.memory.records import MemoryItem

Op = Literal["add", "update", "deny"]
OPS: tuple[Op, ...] = ("add", "update", "deny")
# "meaning": no model answered; the offline sentence encoder (or the words) chose (`corrections`)
DecidedBy = Literal["model", "rule", "meaning"]


@dataclass(frozen=True, slots=True)
class Judgement:
    """`update`: the new fact is stored and replaces `retire_ids`; `deny`: it retires them
    and is kept only as history (a bare negation is never injected); `add`: nothing retires."""

    op: Op
    retire_ids: tuple[int, ...] = ()
    by: DecidedBy = "model"
    reason: str = ""

    @property
    def retire_reason(self) -> str:
        return f"{self.by}:{self.op}"


@dataclass(frozen=True, slots=True)
class KnownFact:
    """A live fact listed to the model under a ref: whose it is and where it lives."""

    ref: str  # "f1"
    item_id: int
    subject_user_id: int
    scope: str
    text: str


def parse_op(value: object) -> Op | None:
    """The op named by the model, or None when it named none or an unknown one."""
    if not isinstance(value, str):
        return None
    op = value.strip().lower()
    return next((o for o in OPS if o == op), None)


def resolve_refs(
    refs: Sequence[str],
    known: Mapping[str, KnownFact],
    *,
    subject_user_id: int | None,
    scope: str,
) -> tuple[tuple[int, ...], list[str]]:
    """The item ids of the refs that are the same member's listed facts in `scope`, and a
    reason for every ref dropped (unknown, another member's, another scope's)."""
    ids: list[int] = []
    dropped: list[str] = []
    for ref in dict.fromkeys(r.strip() for r in refs):
        fact = known.get(ref)
        if fact is None:
            dropped.append(f"{ref}:unknown_ref")
        elif subject_user_id is None or fact.subject_user_id != subject_user_id:
            dropped.append(f"{ref}:another_member")
        elif fact.scope != scope:
            dropped.append(f"{ref}:another_scope")
        else:
            ids.append(fact.item_id)
    return tuple(ids), dropped


def model_judgement(
    raw_op: object,
    refs: Sequence[str],
    known: Mapping[str, KnownFact],
    *,
    subject_user_id: int | None,
    scope: str,
) -> tuple[Judgement | None, list[str]]:
    """The model's judgement of one fact once its refs are checked, or None (the rules then
    decide) when it gave no usable op, or an update / denial without one valid ref."""
    op = parse_op(raw_op)
    if op is None:
        return None, ["no_op"] if raw_op in (None, "") else [f"unknown_op:{str(raw_op)[:16]}"]
    ids, dropped = resolve_refs(refs, known, subject_user_id=subject_user_id, scope=scope)
    if op == "add":
        return Judgement("add", (), "model", "model_add"), dropped
    if not ids:
        return None, [*dropped, f"{op}_without_valid_ref"]
    return Judgement(op, ids, "model", f"model_{op}"), dropped


@dataclass(frozen=True, slots=True)
class JudgeVerdict:
    judgement: Judgement | None  # None: the rules decide
    reason: str


class FactJudge(Protocol):
    """Decides by meaning what a member's taught fact replaces (fact upkeep's `TeachJudge`)."""

    async def judge(
        self,
        new_fact: str,
        live: Sequence[MemoryItem],
        *,
        bot_id: int,
        group_id: int,
        scope: str,
        subject_user_id: int,
    ) -> JudgeVerdict: ...
