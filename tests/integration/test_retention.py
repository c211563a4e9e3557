"""A retention run prunes each group by its own `[retention]`, in batches, within its budget,
on SQLite and PostgreSQL; `/pallas status` names the database's size and oldest message."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import func, select, text

from pallas.core.clock import DAY_S, FakeClock
from pallas.core.db.models import InjectionSnapshotRow, LlmChatMessageRow, UsageLedgerRow
from pallas.core.db.models_pipeline import SessionVariableEventRow
from pallas.core.db.models_routes import RouteDecisionRow
from pallas.core.db.repositories.usage import UsageEntry
from pallas.core.db.retention import database_facts
from pallas.core.records import StoredMessage
from pallas.core.settings import PallasSettings
from pallas.core.state import MemoryStateStore
from pallas.features.retention import RetentionConfig, RetentionJob
from pallas.runtime import PallasRuntime

BOT = 10
PRUNED, KEPT = 801, 802  # the first group keeps 30 days, the other everything
NOW = 1_760_000_000.0
OLD, NEW = NOW - 40 * DAY_S, NOW - 2 * DAY_S


async def _fill(runtime: PallasRuntime) -> None:
    mid = 0
    for group in (PRUNED, KEPT):
        for at in (OLD, NEW):
            for _ in range(300):
                mid += 1
                runtime.writer.submit(StoredMessage(BOT, group, mid, 100, at + mid, "x"))
            async with runtime.sessions() as session:
                session.add_all(
                    [LlmChatMessageRow(bot_id=BOT, group_id=group, user_id=100, role="user",
                                       content="q", is_summary=False, extra={}, created_at=at)
                     for _ in range(40)]
                    + [InjectionSnapshotRow(turn_id=f"t{group}-{at}-{i}", bot_id=BOT,
                                            group_id=group, user_id=100, message_id=i,
                                            created_at=at, model="m", outcome="delivered",
                                            data={}) for i in range(5)]
                    + [SessionVariableEventRow(bot_id=BOT, group_id=group, member_id=100,
                                               name="hp", op="-", operand="1", old_value="2",
                                               new_value="1", turn_id="t", actor="model",
                                               created_at=at) for _ in range(3)]
                )  # fmt: skip
                await session.commit()
            for i in range(4):  # the routing history, written behind like the router does
                runtime.repos.routes.add({"time": at, "bot": BOT, "group": group, "user": 100,
                                          "message_id": i, "outcome": "skip", "stage": "gate",
                                          "reason": "not_addressed"})  # fmt: skip
            await runtime.repos.routes.flush()
            await runtime.repos.usage.record(
                UsageEntry(now=at, bot_id=BOT, group_id=group, task="chat", model="m",
                           prompt_tokens=1, completion_tokens=1)
            )  # fmt: skip
    await runtime.writer.flush()


async def _count(runtime: PallasRuntime, table: type, group: int) -> int:
    async with runtime.sessions() as session:
        stmt = select(func.count()).select_from(table).where(table.group_id == group)  # type: ignore[attr-defined]
        return int((await session.execute(stmt)).scalar_one())


async def test_each_group_is_pruned_by_its_own_rule_in_budgeted_runs(
    database_url: str, tmp_path: Path
) -> None:
    clock = FakeClock(NOW)
    settings = PallasSettings(
        database_url=database_url, pallas_config_dir=tmp_path / "c", pallas_data_dir=tmp_path
    )
    runtime = await PallasRuntime.start(settings, clock=clock, state=MemoryStateStore(clock))
    rule = RetentionConfig(messages_days=30, sessions_days=30, snapshots_days=30,
                           usage_days=30, audit_days=30, routes_days=30)  # fmt: skip
    job = RetentionJob(
        runtime.sessions, clock, scopes=runtime.repos.messages.groups,
        config_of=lambda group: rule if group == PRUNED else RetentionConfig(),
        batch=100, max_rows=250,
    )  # fmt: skip
    try:
        await _fill(runtime)
        first = await job.run()
        assert first.budget_spent and first.total == 250  # a big backlog: one budget per run
        assert first.pages_freed > 0 or not database_url.startswith("sqlite")
        while (report := await job.run()).total:
            assert report.total <= 250
        if database_url.startswith("sqlite"):  # the freed pages went back to the file system
            async with runtime.sessions() as session:
                free = (await session.execute(text("PRAGMA freelist_count"))).scalar_one()
            assert free == 0
        assert await runtime.repos.messages.count(group_id=PRUNED) == 300  # the recent ones
        assert await runtime.repos.messages.count(group_id=KEPT) == 600  # its rule: keep
        for table, kept in ((LlmChatMessageRow, 40), (InjectionSnapshotRow, 5),
                            (UsageLedgerRow, 1), (SessionVariableEventRow, 3),
                            (RouteDecisionRow, 4)):  # fmt: skip
            assert await _count(runtime, table, PRUNED) == kept
            assert await _count(runtime, table, KEPT) == 2 * kept
        oldest = await runtime.repos.messages.recent(BOT, PRUNED, limit=300)
        assert min(m.time for m in oldest) >= NOW - 30 * DAY_S
        facts = await database_facts(runtime.sessions)
        assert facts.size_bytes and facts.oldest_message_at is not None
        assert facts.oldest_message_at < NOW - 30 * DAY_S  # the other group keeps its history
        assert facts.line_zh().startswith("数据库 ") and "最早保留的消息 2025-" in facts.line_zh()
    finally:
        await runtime.stop()
