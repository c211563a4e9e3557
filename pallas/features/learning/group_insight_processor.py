"""The group-insight sweep: rebuild reply pairs, label them with the cheap model, refresh style.

One sweep (every `sweep_interval_seconds`, or `/pallas learn now`):
1. one `GroupWork` per bot × group that has messages: rows after the stored cursor, whether
   this bot collects there (one account per group, `collector.choose_collector`: a group
   several accounts share is learned once), and what labelling already spent today;
2. `plan_sweep` hands out jobs round-robin from the stored position (no group starves);
3. per job: rows after the cursor (+ `history_rows` before it, as triggers only) →
   `build_reply_pairs` → `take_batch` → when the budget allows, one cheap-model call
   (`build_label_prompt` → `parse_label_response`) → pairs, labels and the new cursor stored;
4. per touched group: strategies re-summarised from its labels, the reply profile rebuilt when
   stale, and the reply-path cache generation bumped.

Budget. Spend is counted per group per budget day in the group's cursor row (calls, prompt +
completion tokens of the labelling calls). The calls go through `llm.complete("cheap")`
like every other cheap-model task, so the usage ledger has them under "cheap" too; the learning
budget reads only its own counters and is not eaten by summaries or extraction.

Failures. A failed call (timeout, HTTP error, disabled client) leaves the cursor where it was:
the next sweep retries the same rows (pairs already stored are not stored twice). An answer
that parses to no label counts as an attempt; after `label_max_attempts` the batch is passed
over (pairs kept, unlabelled) so one poisonous batch cannot block a group forever.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from pallas.core import state_keys
from pallas.core.clock import Clock
from pallas.core.db.repositories.messages import MessageRepository
from pallas.core.learning_records import PairLabel, ReplyPair
from pallas.core.state import StateStore, claim
from pallas.features.learning.repository import CursorState, LearningRepository
from pallas.providers.client import LLMClient

from .collector import CollectorChoice, choose_collector
from .config import LearningConfig
from .group_store import bump_generation
from .labeling import build_label_prompt, parse_label_response
from .pairs import PairOptions, build_reply_pairs
from .reply_shape import build_reply_profile
from .scheduler import GroupKey, GroupWork, LabelJob, budget_day, plan_sweep, take_batch
from .strategies import summarize_strategies

log = logging.getLogger("pallas.learning")


class InsightConfigView(Protocol):
    """What the sweep reads of a group's config (`GroupConfig` is one)."""

    @property
    def learning(self) -> LearningConfig: ...

    @property
    def other_bot_ids(self) -> Sequence[int]: ...  # their lines are not members' examples


LOCK_KEY = state_keys.LEARNING_SWEEP_LOCK
LOCK_TTL_SECONDS = 1800.0
MAX_STORED_STRATEGIES = 200
LABEL_MAX_TOKENS = 4000


@dataclass(frozen=True, slots=True)
class JobReport:
    bot_id: int
    group_id: int
    scanned: int = 0
    pairs: int = 0  # pairs in this batch
    new_pairs: int = 0
    labels: int = 0
    labelled: bool = False  # a cheap-model call was made
    cursor_from: int = 0
    cursor_to: int = 0
    error: str = ""


@dataclass(frozen=True, slots=True)
class SweepReport:
    jobs: tuple[JobReport, ...] = ()
    skipped: tuple[tuple[GroupKey, str], ...] = ()
    refreshed: tuple[GroupKey, ...] = ()
    reason: str = ""
    busy: bool = False

    @property
    def llm_calls(self) -> int:
        return sum(1 for j in self.jobs if j.labelled)

    def summary(self) -> str:
        if self.busy:
            return "busy: another sweep is running"
        pairs = sum(j.new_pairs for j in self.jobs)
        labels = sum(j.labels for j in self.jobs)
        errors = sum(1 for j in self.jobs if j.error)
        return (
            f"{len(self.jobs)} jobs, {len(self.refreshed)} groups refreshed, {pairs} new pairs, "
            f"{labels} labels, {self.llm_calls} llm calls, {errors} errors ({self.reason})"
        )


def _pair_options(
    group_config: Callable[[int], InsightConfigView], group_id: int, config: LearningConfig
) -> PairOptions:
    options = config.pair_options()
    others = set(options.other_bot_ids) | set(group_config(group_id).other_bot_ids)
    return replace(options, other_bot_ids=frozenset(others))


def _give_up(error: str, cursor: CursorState, config: LearningConfig) -> bool:
    """Pass a batch over only after repeated unparseable answers; failed calls always retry."""
    return error.startswith("parse:") and cursor.failures_at_cursor >= config.label_max_attempts


class GroupInsightProcessor:
    def __init__(
        self,
        repo: LearningRepository,
        *,
        messages: MessageRepository,
        state: StateStore,
        clock: Clock,
        llm: LLMClient,
        flush: Callable[[], Awaitable[None]],  # the message writer's: rows are on disk
        group_config: Callable[[int], InsightConfigView],
    ) -> None:
        self.repo = repo
        self.messages = messages
        self.state = state
        self.clock = clock
        self.llm = llm
        self.flush = flush
        self.group_config = group_config

    def config(self, group_id: int) -> LearningConfig:
        return self.group_config(group_id).learning

    async def sweep(self) -> SweepReport:
        """One sweep; refuses (busy) while another one holds the lock."""
        state = self.state
        now = self.clock.now()
        if not await claim(state, LOCK_KEY, now, ttl=LOCK_TTL_SECONDS, when_unavailable=False):
            return SweepReport(busy=True, reason="locked")
        try:
            return await self._sweep(now)
        finally:
            await state.delete(LOCK_KEY)

    async def _sweep(self, now: float) -> SweepReport:
        await self.flush()
        base = self.config(0)
        options = base.scheduler_options()
        works = await self._group_work(now, base)
        plan = plan_sweep(works, position=await self.repo.sweep_position(), options=options)
        reports: list[JobReport] = []
        failed: set[GroupKey] = set()
        for job in plan.jobs:
            if job.key in failed:
                continue  # a failed call stops this group's jobs until the next sweep
            report = await self._run_job(job, now)
            reports.append(report)
            if report.error:
                failed.add(job.key)
        touched = tuple(dict.fromkeys(j.key for j in plan.jobs))
        for bot_id, group_id in touched:
            labelled = any(
                r.labels for r in reports if (r.bot_id, r.group_id) == (bot_id, group_id)
            )
            await self._refresh(bot_id, group_id, now, strategies=labelled)
        await self.repo.save_sweep_position(plan.next_position, now=now)
        sweep = SweepReport(tuple(reports), plan.skipped, touched, plan.reason)
        log.info("group insight sweep: %s", sweep.summary())
        return sweep

    async def _group_work(self, now: float, base: LearningConfig) -> list[GroupWork]:
        """One `GroupWork` per bot × group; budgets are the group's own (see `_normalised`)."""
        cursors = await self.repo.cursors()
        works = []
        for bot_id, group_id, collects in await self._accounts(cursors):
            config = self.config(group_id)
            cursor = cursors.get((bot_id, group_id)) or CursorState(bot_id, group_id)
            enabled = config.collect_enabled and collects
            pending = 0
            if enabled:
                pending = await self.repo.count_rows_after(bot_id, group_id, cursor.last_row_id)
            day = budget_day(now, utc_offset_hours=config.budget_utc_offset_hours)
            calls, tokens = cursor.spent_on(day)
            works.append(
                GroupWork(
                    bot_id=bot_id,
                    group_id=group_id,
                    pending_rows=pending,
                    cursor_row_id=cursor.last_row_id,
                    calls_used_today=calls + base.daily_call_budget - config.daily_call_budget,
                    tokens_used_today=tokens + base.daily_token_budget - config.daily_token_budget,
                    enabled=enabled,
                )
            )
        # `plan_sweep` checks `used + planned <= base budget`; shifting `used` by
        # (base − group budget) makes that exactly `spent + planned <= group budget`.
        return works

    async def collector(self, group_id: int) -> CollectorChoice:
        """The account that learns the group (`/pallas learn` shows it)."""
        choices = await self._collectors(await self.repo.cursors())
        chosen = choices.get(group_id)
        if chosen is None:
            configured = self.config(group_id).collector_bot_id
            return choose_collector(configured)
        return chosen[1]

    async def _accounts(
        self, cursors: Mapping[tuple[int, int], CursorState]
    ) -> list[tuple[int, int, bool]]:
        """(account, group, collects) of every account with lines in a group and of the
        group's collector: one account learns a group several accounts share."""
        out = []
        for group_id, (stored_by, chosen) in (await self._collectors(cursors)).items():
            for bot_id in {*stored_by, *([chosen.bot_id] if chosen.bot_id else [])}:
                out.append((bot_id, group_id, bot_id == chosen.bot_id))
        return sorted(out)

    async def _collectors(
        self, cursors: Mapping[tuple[int, int], CursorState]
    ) -> dict[int, tuple[set[int], CollectorChoice]]:
        """Per group with lines (private chats excluded: never a group's style): the accounts
        that stored them and the collector (`choose_collector`)."""
        stored: dict[int, set[int]] = {}
        for bot_id, group_id in await self.messages.groups():
            if group_id:
                stored.setdefault(group_id, set()).add(bot_id)
        out = {}
        for group_id, stored_by in stored.items():
            collecting = {b for (b, g), c in cursors.items() if g == group_id and c.last_row_id}
            configured = self.config(group_id).collector_bot_id
            chosen = choose_collector(configured, collecting=collecting, stored_by=stored_by)
            out[group_id] = (stored_by, chosen)
        return out

    async def _run_job(self, job: LabelJob, now: float) -> JobReport:
        """One batch of one group; batch size and scan width are the group's own settings."""
        config = self.config(job.group_id)
        cursor = await self.repo.cursor(job.bot_id, job.group_id)
        after = cursor.last_row_id
        fresh = await self.messages.since_row(
            job.bot_id, job.group_id, after, limit=config.max_scan_rows
        )
        if not fresh:
            return JobReport(job.bot_id, job.group_id, cursor_from=after, cursor_to=after)
        history = await self.repo.rows_up_to(
            job.bot_id, job.group_id, after, limit=config.history_rows
        )
        result = build_reply_pairs(
            [*history, *fresh],
            bot_id=job.bot_id,
            group_id=job.group_id,
            after_row_id=after,
            options=_pair_options(self.group_config, job.group_id, config),
        )
        batch = take_batch(result, after_row_id=after, batch_size=config.label_batch_size)
        new_pairs = await self.repo.add_pairs(batch.pairs, now=now)
        report = JobReport(
            job.bot_id,
            job.group_id,
            scanned=len(fresh),
            pairs=len(batch.pairs),
            new_pairs=new_pairs,
            cursor_from=after,
            cursor_to=after,
        )
        cursor = replace(cursor, pairs_total=cursor.pairs_total + new_pairs, updated_at=now)
        labels: list[PairLabel] = []
        if job.label and batch.pairs and self._may_label(cursor, config, now):
            outcome = await self._label(batch.pairs, cursor, config, now)
            cursor, labels, error = outcome
            report = replace(report, labelled=True)
            if error and not _give_up(error, cursor, config):
                await self.repo.save_cursor(replace(cursor, last_error=error))
                log.warning(
                    "group %s: labelling failed (%s, attempt %d); cursor stays at %d",
                    job.group_id,
                    error,
                    cursor.failures_at_cursor,
                    after,
                )
                return replace(report, error=error)
            if error:
                log.warning(
                    "group %s: %d unusable answers for rows %d..%d; storing them unlabelled",
                    job.group_id,
                    cursor.failures_at_cursor,
                    after,
                    batch.next_cursor_row_id,
                )
        stored_labels = await self.repo.add_labels(labels, now=now)
        cursor = replace(
            cursor,
            last_row_id=batch.next_cursor_row_id,
            failures_at_cursor=0,
            labels_total=cursor.labels_total + stored_labels,
            last_error="",
        )
        await self.repo.save_cursor(cursor)
        return replace(report, labels=stored_labels, cursor_to=batch.next_cursor_row_id)

    def _may_label(self, cursor: CursorState, config: LearningConfig, now: float) -> bool:
        """The exact per-group check right before spending (the plan used estimates)."""
        if not self.llm.enabled:
            return False
        day = budget_day(now, utc_offset_hours=config.budget_utc_offset_hours)
        calls, tokens = cursor.spent_on(day)
        return calls < config.daily_call_budget and tokens < config.daily_token_budget

    async def _label(
        self, pairs: tuple[ReplyPair, ...], cursor: CursorState, config: LearningConfig, now: float
    ) -> tuple[CursorState, list[PairLabel], str]:
        """One cheap-model call: (cursor with spend recorded, labels, error or "")."""
        result = await self.llm.complete(
            "cheap",
            build_label_prompt(pairs),
            bot_id=cursor.bot_id,
            group_id=cursor.group_id,
            max_tokens=LABEL_MAX_TOKENS,
            temperature=0.2,
        )
        day = budget_day(now, utc_offset_hours=config.budget_utc_offset_hours)
        cursor = cursor.with_spend(day, 1, result.prompt_tokens + result.completion_tokens)
        if not result.ok:
            failures = cursor.failures_at_cursor + 1
            return replace(cursor, failures_at_cursor=failures), [], f"llm:{result.error}"
        parsed = parse_label_response(result.text, pairs)
        if not parsed.labels:
            failures = cursor.failures_at_cursor + 1
            return replace(cursor, failures_at_cursor=failures), [], f"parse:{parsed.reason}"
        if parsed.rejected:
            log.info("group %s: %d label items rejected", cursor.group_id, len(parsed.rejected))
        return cursor, list(parsed.labels), ""

    async def _refresh(self, bot_id: int, group_id: int, now: float, *, strategies: bool) -> None:
        config = self.config(group_id)
        if strategies or not await self.repo.strategies(bot_id, group_id):
            labels = await self.repo.labels(bot_id, group_id)
            summary = summarize_strategies(
                labels,
                bot_id=bot_id,
                group_id=group_id,
                now=now,
                half_life_days=config.strategy_half_life_days,
            )
            await self.repo.replace_strategies(
                bot_id, group_id, summary[:MAX_STORED_STRATEGIES], now=now
            )
        await self._refresh_profile(bot_id, group_id, now, config)
        await bump_generation(self.state, group_id)

    async def _refresh_profile(
        self, bot_id: int, group_id: int, now: float, config: LearningConfig
    ) -> None:
        stored = await self.repo.profile(bot_id, group_id)
        cursor = await self.repo.cursor(bot_id, group_id)
        if stored is not None and (
            cursor.last_row_id - stored.last_row_id < config.profile_refresh_rows
            and now - stored.updated_at < config.profile_refresh_seconds
        ):
            return
        rows = await self.messages.recent(bot_id, group_id, limit=config.profile_rows)
        others = frozenset(_pair_options(self.group_config, group_id, config).other_bot_ids)
        profile = build_reply_profile(
            rows,
            bot_id=bot_id,
            group_id=group_id,
            turn_gap_seconds=config.turn_gap_seconds,
            other_bot_ids=others,
        )
        last_row = max((r.row_id for r in rows), default=0)
        await self.repo.save_profile(profile, last_row_id=last_row, now=now)


async def run_sweep(processor: GroupInsightProcessor) -> SweepReport:
    """One sweep over every bot × group (the scheduler and `/pallas learn now` call this)."""
    return await processor.sweep()


def sweep_interval_seconds(processor: GroupInsightProcessor) -> int:
    """The deployment's sweep interval (`[learning] sweep_interval_seconds` in default.toml)."""
    return processor.group_config(0).learning.sweep_interval_seconds


async def scheduled_sweep(processor: GroupInsightProcessor) -> SweepReport | None:
    """The scheduler's entry: a sweep whose failure is logged, never raised."""
    try:
        return await run_sweep(processor)
    except Exception:
        log.exception("group insight sweep failed")
        return None
