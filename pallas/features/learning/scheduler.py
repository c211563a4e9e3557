"""Round-robin planning of the group-insight sweep (every 20 min by default).

Each sweep the wiring layer passes one `GroupWork` per bot × group (pending rows since the
group's stored cursor, LLM calls/tokens already used today) and the stored round-robin position.
`plan_sweep` hands out at most one job per group per round, starting after the position where the
last sweep stopped, so one huge group cannot starve the small ones. Groups over their daily budget
get a pairs-only job (no LLM call) so the expression pool keeps up without spending.

Per-group cursors are message row ids. A job reads rows after `after_row_id` (plus some history
for triggers), builds pairs, and `take_batch` says which pairs to label now and where the cursor
goes, so a restart resumes exactly where the stored cursor says.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pallas.core.clock import local_day
from pallas.core.learning_records import ReplyPair

from .pairs import PairBuildResult

GroupKey = tuple[int, int]  # (bot id, group id)


@dataclass(frozen=True, slots=True)
class GroupWork:
    bot_id: int
    group_id: int
    pending_rows: int  # message rows after the cursor
    cursor_row_id: int  # last processed message row id (stored per bot × group)
    calls_used_today: int = 0
    tokens_used_today: int = 0
    enabled: bool = True  # collect on, and this bot is the group's collector

    @property
    def key(self) -> GroupKey:
        return (self.bot_id, self.group_id)


@dataclass(frozen=True, slots=True)
class SchedulerOptions:
    batch_size: int = 40  # pairs per labelling job
    max_scan_rows: int = 400  # rows a job reads after the cursor
    max_jobs_per_sweep: int = 8
    daily_call_budget: int = 48  # labelling calls per group per day
    daily_token_budget: int = 150_000  # estimated tokens per group per day
    tokens_per_pair: int = 80
    prompt_overhead_tokens: int = 700
    pairs_only_when_over_budget: bool = True


@dataclass(frozen=True, slots=True)
class LabelJob:
    bot_id: int
    group_id: int
    after_row_id: int  # exact for sequence 0; later jobs must re-read the stored cursor
    max_pairs: int
    max_scan_rows: int
    sequence: int  # this group's n-th job in the sweep
    label: bool  # False: build and store pairs only, no LLM call (budget exhausted)
    estimated_tokens: int

    @property
    def key(self) -> GroupKey:
        return (self.bot_id, self.group_id)


@dataclass(frozen=True, slots=True)
class SweepPlan:
    jobs: tuple[LabelJob, ...]
    next_position: GroupKey | None  # store: the next sweep starts after this group
    skipped: tuple[tuple[GroupKey, str], ...]
    reason: str


@dataclass(slots=True)
class _Slot:
    work: GroupWork
    remaining: int
    calls: int = 0
    tokens: int = 0
    jobs: int = 0


def plan_sweep(
    groups: Iterable[GroupWork],
    *,
    position: GroupKey | None,
    options: SchedulerOptions | None = None,
) -> SweepPlan:
    """The jobs of one sweep, round-robin from after `position`."""
    opts = options or SchedulerOptions()
    skipped: list[tuple[GroupKey, str]] = []
    slots: list[_Slot] = []
    for work in sorted(groups, key=lambda w: w.key):
        if not work.enabled:
            skipped.append((work.key, "disabled"))
        elif work.pending_rows <= 0:
            skipped.append((work.key, "no_pending_rows"))
        else:
            slots.append(_Slot(work, work.pending_rows))
    slots = _rotate(slots, position)
    jobs: list[LabelJob] = []
    over_budget: dict[GroupKey, str] = {}
    max_jobs = max(0, opts.max_jobs_per_sweep)
    while len(jobs) < max_jobs:
        added = False
        for slot in slots:
            if len(jobs) >= max_jobs:
                break
            if slot.remaining <= 0:
                continue
            job = _next_job(slot, opts)
            if job is None:
                over_budget[slot.work.key] = "over_daily_budget"
                slot.remaining = 0
                continue
            if not job.label:
                over_budget[slot.work.key] = "over_daily_budget:pairs_only"
            jobs.append(job)
            added = True
        if not added:
            break
    skipped += sorted(over_budget.items())
    next_position = jobs[-1].key if jobs else position
    waiting = sum(1 for slot in slots if slot.remaining > 0)
    return SweepPlan(
        jobs=tuple(jobs),
        next_position=next_position,
        skipped=tuple(skipped),
        reason=f"{len(jobs)} jobs for {len({j.key for j in jobs})} groups; {waiting} still waiting",
    )


def _rotate(slots: Sequence[_Slot], position: GroupKey | None) -> list[_Slot]:
    if position is None:
        return list(slots)
    start = next((i for i, slot in enumerate(slots) if slot.work.key > position), 0)
    return list(slots[start:]) + list(slots[:start])


def _next_job(slot: _Slot, opts: SchedulerOptions) -> LabelJob | None:
    """The slot's next job (labelled when the budget allows), or None when nothing may run."""
    work = slot.work
    pairs = max(1, min(opts.batch_size, 40))
    estimate = opts.prompt_overhead_tokens + pairs * opts.tokens_per_pair
    within_budget = (
        work.calls_used_today + slot.calls + 1 <= opts.daily_call_budget
        and work.tokens_used_today + slot.tokens + estimate <= opts.daily_token_budget
    )
    if not within_budget and not opts.pairs_only_when_over_budget:
        return None
    job = LabelJob(
        bot_id=work.bot_id,
        group_id=work.group_id,
        after_row_id=work.cursor_row_id,
        max_pairs=pairs,
        max_scan_rows=opts.max_scan_rows,
        sequence=slot.jobs,
        label=within_budget,
        estimated_tokens=estimate if within_budget else 0,
    )
    slot.jobs += 1
    slot.remaining -= pairs
    if within_budget:
        slot.calls += 1
        slot.tokens += estimate
    return job


@dataclass(frozen=True, slots=True)
class BatchSelection:
    pairs: tuple[ReplyPair, ...]  # label (or store) these now
    next_cursor_row_id: int  # store as the group's cursor once the pairs are stored
    complete: bool  # every pair of the scanned rows is in this batch


def take_batch(
    result: PairBuildResult, *, after_row_id: int, batch_size: int = 40
) -> BatchSelection:
    """The first `batch_size` pairs in row order and the cursor that resumes right after them."""
    ordered = sorted(result.all_pairs, key=lambda p: (p.response_row_id, p.time, p.response_id))
    taken = tuple(ordered[: max(1, batch_size)])
    if len(ordered) <= len(taken):
        return BatchSelection(taken, max(after_row_id, result.last_row_id), complete=True)
    return BatchSelection(taken, max(after_row_id, taken[-1].response_row_id), complete=False)


def budget_day(now: float, *, utc_offset_hours: float = 8.0) -> str:
    """The budget day (ISO date) `now` falls in; budgets reset at local midnight (UTC+8)."""
    return local_day(now, utc_offset_hours=utc_offset_hours)
