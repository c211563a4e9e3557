from __future__ import annotations

from collections import Counter

import pytest

from pallas.features.learning.pairs import build_reply_pairs
from pallas.features.learning.scheduler import (
    GroupWork,
    SchedulerOptions,
    budget_day,
    plan_sweep,
    take_batch,
)

from .factory import BOT, GROUP, msg

HUGE = GroupWork(BOT, 1, pending_rows=50_000, cursor_row_id=10)
SMALL = [GroupWork(BOT, g, pending_rows=15, cursor_row_id=0) for g in range(2, 7)]


def jobs_per_group(plan):
    return Counter(job.group_id for job in plan.jobs)


def test_one_huge_group_does_not_starve_five_small_ones():
    plan = plan_sweep([HUGE, *SMALL], position=None, options=SchedulerOptions(max_jobs_per_sweep=6))
    assert jobs_per_group(plan) == {g: 1 for g in range(1, 7)}


def test_spare_capacity_goes_round_robin_to_groups_with_backlog():
    plan = plan_sweep(
        [HUGE, *SMALL], position=None, options=SchedulerOptions(max_jobs_per_sweep=10)
    )
    assert jobs_per_group(plan) == {1: 5, 2: 1, 3: 1, 4: 1, 5: 1, 6: 1}
    # the huge group's extra jobs come after every small group got its first one
    first_round = [job.group_id for job in plan.jobs[:6]]
    assert sorted(first_round) == [1, 2, 3, 4, 5, 6]
    assert [job.sequence for job in plan.jobs if job.group_id == 1] == [0, 1, 2, 3, 4]


def test_position_carries_fairness_across_sweeps():
    groups = [HUGE, *SMALL]
    options = SchedulerOptions(max_jobs_per_sweep=2)
    position = None
    served: list[int] = []
    for _ in range(3):
        plan = plan_sweep(groups, position=position, options=options)
        served += [job.group_id for job in plan.jobs]
        position = plan.next_position
    assert sorted(served) == [1, 2, 3, 4, 5, 6]  # every group once in three sweeps of two


def test_rotation_starts_after_the_stored_position():
    plan = plan_sweep(
        [HUGE, *SMALL], position=(BOT, 4), options=SchedulerOptions(max_jobs_per_sweep=3)
    )
    assert [job.group_id for job in plan.jobs] == [5, 6, 1]
    assert plan.next_position == (BOT, 1)


def test_jobs_start_at_each_groups_cursor():
    plan = plan_sweep([HUGE, SMALL[0]], position=None)
    cursors = {job.group_id: job.after_row_id for job in plan.jobs if job.sequence == 0}
    assert cursors == {1: 10, 2: 0}
    assert all(job.max_pairs == 40 for job in plan.jobs)


def test_budget_exhausted_groups_get_pairs_only_jobs():
    spent = GroupWork(BOT, 9, pending_rows=100, cursor_row_id=0, calls_used_today=48)
    plan = plan_sweep([spent, SMALL[0]], position=None)
    labelled = {job.group_id: job.label for job in plan.jobs}
    assert labelled == {9: False, 2: True}
    assert all(job.estimated_tokens == 0 for job in plan.jobs if not job.label)
    assert (spent.key, "over_daily_budget:pairs_only") in plan.skipped
    strict = plan_sweep(
        [spent], position=None, options=SchedulerOptions(pairs_only_when_over_budget=False)
    )
    assert strict.jobs == () and strict.skipped == ((spent.key, "over_daily_budget"),)


def test_token_budget_limits_the_number_of_labelled_jobs_per_day():
    options = SchedulerOptions(
        max_jobs_per_sweep=10, daily_token_budget=10_000, pairs_only_when_over_budget=False
    )
    estimate = options.prompt_overhead_tokens + 40 * options.tokens_per_pair  # 3900
    plan = plan_sweep([HUGE], position=None, options=options)
    assert len(plan.jobs) == 10_000 // estimate == 2


def test_disabled_and_idle_groups_get_nothing():
    disabled = GroupWork(BOT, 20, pending_rows=99, cursor_row_id=0, enabled=False)
    idle = GroupWork(BOT, 21, pending_rows=0, cursor_row_id=500)
    plan = plan_sweep([disabled, idle], position=(BOT, 3))
    assert plan.jobs == ()
    assert plan.next_position == (BOT, 3)
    assert dict(plan.skipped) == {(BOT, 20): "disabled", (BOT, 21): "no_pending_rows"}


def conversation(count):
    """Alternating speakers, 5 s apart: every message after the first makes one pair."""
    return [msg(i, 1 + i % 2, f"第{i}句话", i * 5.0) for i in range(1, count + 1)]


def test_cursor_resumes_without_redoing_or_skipping():
    rows = conversation(101)  # 100 pairs
    first = take_batch(build_reply_pairs(rows, bot_id=BOT, group_id=GROUP), after_row_id=0)
    assert len(first.pairs) == 40 and not first.complete
    assert first.next_cursor_row_id == first.pairs[-1].response_row_id == 41

    # restart: only the stored cursor survives
    seen = {p.key for p in first.pairs}
    cursor = first.next_cursor_row_id
    while True:
        built = build_reply_pairs(rows, bot_id=BOT, group_id=GROUP, after_row_id=cursor)
        batch = take_batch(built, after_row_id=cursor)
        assert not seen & {p.key for p in batch.pairs}  # nothing redone
        seen |= {p.key for p in batch.pairs}
        cursor = batch.next_cursor_row_id
        if batch.complete:
            break
    assert len(seen) == 100  # nothing skipped
    assert cursor == 101


def test_cursor_moves_past_rows_without_pairs():
    rows = [msg(i, 1, "自言自语", i * 5.0) for i in range(1, 20)]  # one speaker: no pairs
    batch = take_batch(build_reply_pairs(rows, bot_id=BOT, group_id=GROUP), after_row_id=0)
    assert batch.pairs == () and batch.complete and batch.next_cursor_row_id == 19


@pytest.mark.parametrize(
    ("utc_time", "expected"),
    [
        ("2025-01-01T15:59:59", "2025-01-01"),  # 23:59:59 in UTC+8
        ("2025-01-01T16:00:00", "2025-01-02"),  # local midnight: a new budget day
    ],
)
def test_budget_day_resets_at_local_midnight(utc_time, expected):
    from datetime import UTC, datetime

    now = datetime.fromisoformat(utc_time).replace(tzinfo=UTC).timestamp()
    assert budget_day(now) == expected
