"""The group-insight sweep over a real database and the fake OpenAI server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest

from pallas.app_wiring import insight_for
from pallas.core.clock import FakeClock
from pallas.core.records import StoredMessage
from pallas.features.learning.feedback_repository import FeedbackRepository
from pallas.features.learning.group_insight_processor import run_sweep
from pallas.features.learning.group_store import GroupLearningCache
from pallas.features.learning.pairs import LearningType
from pallas.features.learning.repository import LearningRepository
from pallas.runtime import PallasRuntime
from tests.harness.fake_openai import FakeOpenAI, Scripted
from tests.harness.learning_script import group_script, is_label_request, label_answer
from tests.integration.learning_runtime import (
    BOT,
    MEMBERS,
    OTHER_BOT,
    start_runtime,
    stored,
    write_config,
)

GROUP, GROUP_B, GROUP_C = 7_001, 7_002, 7_003


@pytest.fixture
async def fake() -> AsyncIterator[FakeOpenAI]:
    server = FakeOpenAI(default_reply="not json at all", in_process=True)
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
async def runtime(
    tmp_path: Path, fake: FakeOpenAI, clock: FakeClock, database_url: str
) -> AsyncIterator:
    rt = await start_runtime(tmp_path, fake, clock, database_url)
    yield rt
    await rt.stop()


def label_requests(fake: FakeOpenAI) -> list:
    return [r for r in fake.chat_requests() if is_label_request(r.system_prompt)]


async def feed(rt: PallasRuntime, group_id: int, rounds: int, clock: FakeClock, first_id: int):
    lines = group_script(rounds, first_id=first_id, users=MEMBERS)
    messages = stored(lines, group_id=group_id, t0=clock.now() - 3600)
    await rt.repos.messages.add_many(messages)
    return messages


async def test_sweep_rebuilds_labels_and_summarises_one_group(
    runtime: PallasRuntime, fake: FakeOpenAI, clock: FakeClock
) -> None:
    messages = await feed(runtime, GROUP, 12, clock, first_id=1)
    bot_line = StoredMessage(BOT, GROUP, 900, BOT, clock.now() - 100, "我来啦", is_bot=True)
    reaction = StoredMessage(BOT, GROUP, 901, MEMBERS[0], clock.now() - 95, "欢迎欢迎")
    await runtime.repos.messages.add_many([bot_line, reaction])
    fake.enqueue(label_answer())

    report = await run_sweep(insight_for(runtime))

    repo = LearningRepository(runtime.sessions)
    observed = await repo.pairs(BOT, GROUP)
    reflection = await repo.pairs(BOT, GROUP, learning_type=LearningType.SELF_REFLECTION)
    assert report.llm_calls == 1 and len(label_requests(fake)) == 1
    assert ("快了快了", "确实可以") in {(p.trigger_text, p.response_text) for p in observed}
    assert all(BOT not in (p.trigger_user, p.response_user) for p in observed)
    assert [(p.trigger_text, p.response_text) for p in reflection] == [("我来啦", "欢迎欢迎")]
    labels = await repo.labels(BOT, GROUP)
    assert len(labels) == len(observed) + len(reflection)
    cursor = await repo.cursor(BOT, GROUP)
    assert cursor.last_row_id == max(
        m.row_id for m in await runtime.repos.messages.recent(BOT, GROUP, limit=500)
    )
    assert cursor.calls_today == 1 and cursor.tokens_today == 110
    strategies = await repo.strategies(BOT, GROUP)
    types = {s.learning_type for s in strategies}
    assert types == {LearningType.OBSERVED, LearningType.SELF_REFLECTION}
    profile = await repo.profile(BOT, GROUP)
    assert profile is not None and profile.profile.sample_turns >= len(messages) - 5
    assert profile.profile.single_bubble_share > 0.9


async def test_failed_call_keeps_the_cursor_and_the_next_sweep_resumes(
    runtime: PallasRuntime, fake: FakeOpenAI, clock: FakeClock
) -> None:
    await feed(runtime, GROUP, 6, clock, first_id=1)
    repo = LearningRepository(runtime.sessions)
    fake.enqueue(Scripted(status=500))
    first = await run_sweep(insight_for(runtime))
    assert first.jobs[0].error == "llm:server_error"
    assert (await repo.cursor(BOT, GROUP)).last_row_id == 0
    assert await repo.labels(BOT, GROUP) == []
    stored_pairs = len(await repo.pairs(BOT, GROUP))
    assert stored_pairs > 0  # the pool keeps up even while labelling fails

    fake.enqueue(label_answer())
    second = await run_sweep(insight_for(runtime))
    assert second.jobs[0].error == "" and second.jobs[0].labels == stored_pairs
    assert (await repo.cursor(BOT, GROUP)).last_row_id > 0
    assert len(await repo.pairs(BOT, GROUP)) == stored_pairs  # nothing stored twice


async def test_unparseable_answers_pass_the_batch_over_after_three_attempts(
    runtime: PallasRuntime, fake: FakeOpenAI, clock: FakeClock
) -> None:
    await feed(runtime, GROUP, 6, clock, first_id=1)
    repo = LearningRepository(runtime.sessions)
    for attempt in (1, 2):
        report = await run_sweep(insight_for(runtime))  # default reply: "not json at all"
        assert report.jobs[0].error == "parse:no_json"
        assert (await repo.cursor(BOT, GROUP)).failures_at_cursor == attempt
    report = await run_sweep(insight_for(runtime))
    assert report.jobs[0].error == "" and report.jobs[0].labels == 0
    cursor = await repo.cursor(BOT, GROUP)
    assert cursor.last_row_id > 0 and cursor.failures_at_cursor == 0 and cursor.calls_today == 3


async def test_daily_call_budget_stops_labelling_but_not_pair_collection(
    tmp_path: Path, fake: FakeOpenAI, clock: FakeClock, database_url: str
) -> None:
    write_config(tmp_path, str(GROUP), "[learning]\ndaily_call_budget = 1\nlabel_batch_size = 10\n")
    rt = await start_runtime(tmp_path, fake, clock, database_url)
    try:
        await feed(rt, GROUP, 20, clock, first_id=1)
        fake.enqueue(label_answer(), label_answer())
        report = await run_sweep(insight_for(rt))
        repo = LearningRepository(rt.sessions)
        assert report.llm_calls == 1 and len(label_requests(fake)) == 1
        assert len(report.jobs) > 1  # the rest ran pairs-only
        assert len(await repo.labels(BOT, GROUP)) == 10
        assert len(await repo.pairs(BOT, GROUP)) > 10
        clock.advance(86_400)  # a new budget day
        await feed(rt, GROUP, 5, clock, first_id=10_000)
        report = await run_sweep(insight_for(rt))
        assert report.llm_calls == 1
    finally:
        await rt.stop()


async def test_round_robin_serves_every_group_and_survives_a_restart(
    tmp_path: Path, fake: FakeOpenAI, clock: FakeClock, database_url: str
) -> None:
    write_config(tmp_path, "default", "[learning]\nmax_jobs_per_sweep = 2\nlabel_batch_size = 5\n")
    rt = await start_runtime(tmp_path, fake, clock, database_url)
    for n, group in enumerate((GROUP, GROUP_B, GROUP_C)):
        await feed(rt, group, 15, clock, first_id=1 + n * 1000)
    served: list[int] = []
    fake.enqueue(*[label_answer(5)] * 2)
    report = await run_sweep(insight_for(rt))
    served += [j.group_id for j in report.jobs]
    await rt.stop()

    rt = await start_runtime(tmp_path, fake, clock, database_url)  # same database: state kept
    try:
        fake.enqueue(*[label_answer(5)] * 2)
        report = await run_sweep(insight_for(rt))
        served += [j.group_id for j in report.jobs]
        assert served == [GROUP, GROUP_B, GROUP_C, GROUP]
        repo = LearningRepository(rt.sessions)
        labelled = {label.key for label in await repo.labels(BOT, GROUP)}
        assert len(labelled) == 10  # two batches of 5, none labelled twice
        first_batch_texts = [r.messages[-1]["content"] for r in label_requests(fake)]
        assert first_batch_texts[0] != first_batch_texts[3]  # resumed after the first batch
    finally:
        await rt.stop()


async def test_collect_switch_and_collector_bot(
    tmp_path: Path, fake: FakeOpenAI, clock: FakeClock, database_url: str
) -> None:
    write_config(tmp_path, str(GROUP), "[learning]\ncollect_enabled = false\n")
    write_config(tmp_path, str(GROUP_B), f"[learning]\ncollector_bot_id = {OTHER_BOT}\n")
    rt = await start_runtime(tmp_path, fake, clock, database_url)
    try:
        await feed(rt, GROUP, 5, clock, first_id=1)
        await feed(rt, GROUP_B, 5, clock, first_id=1000)
        await rt.repos.messages.add_many(
            stored(
                group_script(5, first_id=2000, users=MEMBERS),
                group_id=GROUP_B,
                t0=clock.now() - 3600,
                bot_id=OTHER_BOT,
            )
        )
        fake.enqueue(label_answer())
        report = await run_sweep(insight_for(rt))
        repo = LearningRepository(rt.sessions)
        assert await repo.pairs(BOT, GROUP) == []
        assert await repo.pairs(BOT, GROUP_B) == []
        assert len(await repo.pairs(OTHER_BOT, GROUP_B)) > 0
        assert dict(report.skipped)[(BOT, GROUP)] == "disabled"
    finally:
        await rt.stop()


async def test_a_second_sweep_while_one_runs_is_refused(
    runtime: PallasRuntime, fake: FakeOpenAI, clock: FakeClock
) -> None:
    await feed(runtime, GROUP, 3, clock, first_id=1)
    await runtime.state.set("learning:sweep_lock", 1.0, ttl=60)
    report = await run_sweep(insight_for(runtime))
    assert report.busy and report.jobs == () and label_requests(fake) == []


async def test_private_chats_are_never_learned_from(
    runtime: PallasRuntime, fake: FakeOpenAI, clock: FakeClock
) -> None:
    """Every user's private messages are stored under group id 0: not a group's style."""
    await feed(runtime, 0, 12, clock, first_id=1)
    fake.enqueue(label_answer())

    report = await run_sweep(insight_for(runtime))

    repo = LearningRepository(runtime.sessions)
    assert report.llm_calls == 0 and label_requests(fake) == []
    assert await repo.pairs(BOT, 0) == []


async def test_a_group_two_accounts_share_is_learned_once_from_all_its_lines(
    runtime: PallasRuntime, fake: FakeOpenAI, clock: FakeClock
) -> None:
    """Each line is stored by whichever account got it first: the group's collector (the
    lowest account) learns from all of them, as one account would; the other learns nothing."""
    lines = group_script(12, first_id=1, users=MEMBERS)
    alone = stored(lines, group_id=GROUP, t0=clock.now() - 3600)
    shared = [
        replace(m, group_id=GROUP_C, bot_id=(BOT, OTHER_BOT)[i % 2])
        for i, m in enumerate(stored(lines, group_id=GROUP_C, t0=clock.now() - 3600))
    ]
    await runtime.repos.messages.add_many([*alone, *shared])
    fake.enqueue(label_answer(), label_answer())
    await run_sweep(insight_for(runtime))
    repo = LearningRepository(runtime.sessions)
    collector, other = sorted((BOT, OTHER_BOT))

    def texts(pairs: list) -> set[tuple[str, str]]:
        return {(p.trigger_text, p.response_text) for p in pairs}

    learned = await repo.pairs(collector, GROUP_C)
    ref = await repo.pairs(BOT, GROUP)
    assert learned and texts(learned) == texts(ref)
    assert await repo.pairs(other, GROUP_C) == []
    # the reply path of either account reads what the collector learned
    cache = GroupLearningCache(repo, FeedbackRepository(runtime.sessions), runtime.state)
    for account in (BOT, OTHER_BOT):
        data = await cache.get(account, GROUP_C, now=clock.now(), pool_size=200, ttl=60)
        assert data.bot_id == collector and texts(list(data.observed_pairs)) == texts(learned)
