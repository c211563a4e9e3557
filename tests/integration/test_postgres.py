"""PostgreSQL parity: the start-up migration and every repository on a real PostgreSQL server.

The migration tests are PostgreSQL-only. The repository tests take `database_url` (see
conftest.py), so each runs on SQLite and on PostgreSQL with the same assertions: what passes on
one backend must pass on the other. Select the PostgreSQL side with `pytest -m postgres`.

The data is what QQ really sends: ids past 2**31 (users, groups, bots have 10-11 digits; message
ids are signed 64-bit), emoji and CJK, text with U+0000 or a lone surrogate (both are stored
cleaned, see pallas/core/db/types.py), very long text, and nested JSON.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from subprocess import PIPE, STDOUT

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import BigInteger, inspect, text
from sqlalchemy.ext.asyncio import async_sessionmaker

import pallas.core.db.models_learning
import pallas.core.db.models_memory
import pallas.core.db.models_session  # noqa: F401  (every table on Base.metadata)
from pallas.core.clock import FakeClock
from pallas.core.db import migrate
from pallas.core.db.engine import create_engine, session_factory
from pallas.core.db.models import Base
from pallas.core.db.repositories.chat_sessions import ChatSessionRepository
from pallas.core.db.repositories.messages import MAX_STORED_CHARS, MessageRepository
from pallas.core.db.repositories.snapshots import InjectionSnapshot, SnapshotRepository
from pallas.core.db.repositories.usage import UsageEntry, UsageRepository, UsageTotals
from pallas.core.db.writer import MessageWriter
from pallas.core.records import SessionTurn, SpeakerCount, StoredMessage
from pallas.core.state import MemoryStateStore
from pallas.features.cost.counters import UsageCounters
from pallas.features.learning.feedback_repository import FeedbackRepository
from pallas.features.learning.injection_feedback import Blame, FeedbackOutcome
from pallas.features.learning.labeling import PairLabel
from pallas.features.learning.pairs import LearningType, PairKind, ReplyPair
from pallas.features.learning.reply_shape import GroupReplyProfile
from pallas.features.learning.repository import CursorState, LearningRepository
from pallas.features.learning.strategies import BehaviorStrategy
from pallas.features.memory.isolation import group_scope, pool_scope, private_scope
from pallas.features.memory.records import NewMemory
from pallas.features.memory.repository import MemoryRepository
from pallas.features.session.repository import (
    ImageDescriptionRepository,
    SessionTopic,
    SessionTopicRepository,
)
from tests.harness.postgres import PostgresServer

BOT = 3_000_000_001  # > 2**31: must be BIGINT everywhere
GROUP, OTHER_GROUP = 9_876_543_210, 1_234_567_890
THIRD_GROUP = 5_550_000_001
AMIYA, KALTSIT = 12_345_678_901, 2_222_222_222
MAX_ID, MIN_ID = 2**63 - 1, -(2**63)  # QQ message ids are signed 64-bit
T0 = 1_780_000_000.25
REPO = Path(__file__).resolve().parents[2]
EMOJI = "博士🐑晚上好😀👨‍👩‍👧"


@pytest.fixture
async def sessions(database_url: str) -> AsyncIterator[async_sessionmaker]:
    await migrate.upgrade(database_url)
    engine = create_engine(database_url)
    yield session_factory(engine)
    await engine.dispose()


def message(message_id: int, t: float, text: str = "聊天", **fields: object) -> StoredMessage:
    values: dict = {"user_id": AMIYA, "group_id": GROUP, "raw_message": text, **fields}
    return StoredMessage(bot_id=BOT, message_id=message_id, time=T0 + t, text=text, **values)


# ------------------------------------------------------------------------------- migrations


# every Alembic branch label; a new feature branch adds its label here
MIGRATION_BRANCHES = {
    "memory", "learning", "session", "pipeline_state", "stickers", "console", "provider_usage",
    "route_history", "message_line_key", "member_profile", "reminders",
}  # fmt: skip


def _schema_state(connection) -> tuple[set[str], list]:  # type: ignore[no-untyped-def]
    context = MigrationContext.configure(connection, opts={"compare_type": True})
    return set(context.get_current_heads()), compare_metadata(context, Base.metadata)


async def test_migrated_schema_is_at_heads_and_matches_the_models(database_url: str) -> None:
    """Models and migrations agree on both backends (types included: BIGINT, JSON, …)."""
    await migrate.upgrade(database_url)
    script_heads = set(
        ScriptDirectory.from_config(migrate.alembic_config(database_url)).get_heads()
    )
    engine = create_engine(database_url)
    try:
        async with engine.connect() as connection:
            heads, differences = await connection.run_sync(_schema_state)
    finally:
        await engine.dispose()
    # one head per feature branch off 0002 (memory, learning, session, stickers, …)
    assert heads == script_heads and len(heads) == len(MIGRATION_BRANCHES)
    assert differences == []


@pytest.mark.postgres
async def test_startup_migration_on_an_empty_postgres_database(
    postgres_server: PostgresServer,
) -> None:
    """What `PallasRuntime.start` runs, from nothing, twice; then down to base and up again."""
    url = postgres_server.create_database("pallas_fresh")
    try:
        await migrate.upgrade(url)
        await migrate.upgrade(url)  # a restart: nothing to do
        engine = create_engine(url)
        try:
            async with engine.connect() as connection:
                columns = await connection.run_sync(
                    lambda sync: {
                        (table, column["name"]): str(column["type"])
                        for table in inspect(sync).get_table_names()
                        for column in inspect(sync).get_columns(table)
                    }
                )
                heads = await connection.execute(text("SELECT version_num FROM alembic_version"))
                assert len(heads.all()) == len(MIGRATION_BRANCHES)  # one head per branch
        finally:
            await engine.dispose()
        bigints = {
            (table.name, column.name)
            for table in Base.metadata.tables.values()
            for column in table.columns
            if isinstance(column.type, BigInteger)
        }
        assert ("message", "message_id") in bigints and ("message", "id") in bigints
        assert {key: columns[key] for key in bigints} == dict.fromkeys(bigints, "BIGINT")
        assert columns[("message", "segments")] == "JSON"
        assert columns[("message", "is_bot")] == "BOOLEAN"
        assert columns[("message", "time")] == "DOUBLE PRECISION"  # not a 4-byte REAL

        await asyncio.to_thread(command.downgrade, migrate.alembic_config(url), "base")
        tables = postgres_server.sql(
            "SELECT string_agg(tablename, ',') FROM pg_tables WHERE schemaname = 'public'",
            database="pallas_fresh",
        )
        assert tables.strip() == "alembic_version"
        await migrate.upgrade(url)
    finally:
        postgres_server.drop_database("pallas_fresh")


@pytest.mark.postgres
async def test_processes_starting_at_once_migrate_one_after_the_other(
    postgres_server: PostgresServer,
) -> None:
    """Three bot processes started together on one empty database (`pallas db upgrade` is the
    start-up migration): all succeed and the schema is at the heads once. Without the
    migration lock one of them failed creating `alembic_version` (a duplicate key) each time."""
    url = postgres_server.create_database("pallas_race")
    env = {**os.environ, "DATABASE_URL": url}
    argv = [sys.executable, "-m", "pallas.cli", "db", "upgrade"]
    procs: list[asyncio.subprocess.Process] = []
    try:
        for _ in range(2):  # a fresh database, then all again at the heads
            procs = [
                await asyncio.create_subprocess_exec(
                    *argv, env=env, stdout=PIPE, stderr=STDOUT, cwd=REPO
                )
                for _ in range(3)
            ]
            outputs = await asyncio.wait_for(
                asyncio.gather(*(p.communicate() for p in procs)), timeout=90
            )
            for proc, (out, _) in zip(procs, outputs, strict=True):
                assert proc.returncode == 0, out.decode(errors="replace")[-2000:]
        heads = postgres_server.sql("SELECT count(*) FROM alembic_version", database="pallas_race")
        assert int(heads.strip()) == len(MIGRATION_BRANCHES)
    finally:
        for proc in procs:
            if proc.returncode is None:
                proc.kill()
        postgres_server.drop_database("pallas_race")


# ------------------------------------------------------------------------------- messages


async def test_messages_big_ids_duplicates_and_reads(sessions) -> None:
    repo = MessageRepository(sessions)
    batch = [
        message(MIN_ID, 1, "最小", reply_to=MAX_ID, card="阿米娅", nickname="amiya"),
        message(-1, 2, "负一"),
        message(0, 3, "零", user_id=KALTSIT, nickname="凯尔希"),
        message(2**31 + 5, 4, "过了 32 位"),
        message(MAX_ID, 5, EMOJI, segments=({"type": "text", "data": {"text": EMOJI}},)),
    ]
    assert await repo.add_many(batch) == 5
    # a replayed event and one new message in the same batch: on-conflict-do-nothing
    assert await repo.add_many([batch[0], batch[4], message(7, 6, "新的")]) == 1
    assert await repo.add(batch[1]) is False
    # the same message id in another group is another message
    assert await repo.add(message(MAX_ID, 7, "别的群", group_id=OTHER_GROUP)) is True

    assert await repo.count() == 7
    assert await repo.count(BOT, GROUP) == 6
    assert sorted(await repo.groups()) == sorted([(BOT, GROUP), (BOT, OTHER_GROUP)])
    assert await repo.groups(BOT + 1) == []

    recent = await repo.recent(BOT, GROUP, limit=3)
    assert [m.message_id for m in recent] == [2**31 + 5, MAX_ID, 7]  # oldest first
    assert recent[1].text == EMOJI and recent[1].segments[0]["data"]["text"] == EMOJI
    before = await repo.recent(BOT, GROUP, limit=10, before_time=T0 + 3)
    assert [m.message_id for m in before] == [MIN_ID, -1]

    found = await repo.find_by_message_ids(BOT, GROUP, [MIN_ID, MAX_ID, 0, 424242])
    assert set(found) == {MIN_ID, MAX_ID, 0}
    oldest = found[MIN_ID]
    assert (oldest.bot_id, oldest.group_id, oldest.user_id) == (BOT, GROUP, AMIYA)
    assert oldest.reply_to == MAX_ID and oldest.card == "阿米娅" and oldest.is_bot is False
    assert oldest.time == T0 + 1  # DOUBLE PRECISION: the fraction survives

    rows = await repo.since_row(BOT, GROUP, 0, limit=100)
    assert [m.message_id for m in rows] == [MIN_ID, -1, 0, 2**31 + 5, MAX_ID, 7]
    assert [m.row_id for m in rows] == sorted(m.row_id for m in rows)
    after = await repo.since_row(BOT, GROUP, rows[2].row_id, limit=2)
    assert [m.message_id for m in after] == [2**31 + 5, MAX_ID]


async def test_speaker_counts_and_message_count(sessions) -> None:
    repo = MessageRepository(sessions)
    await repo.add_many(
        [
            message(1, 10, card="旧名片"),
            message(2, 20, card="阿米娅🐰"),
            message(3, 30, card="   "),  # blank card: the latest non-empty one wins
            *(message(10 + i, 40 + i, user_id=KALTSIT, nickname="凯尔希") for i in range(3)),
            message(20, 50, user_id=4_000_000_004),  # no name at all
            *(message(30 + i, 60 + i, user_id=BOT, card="帕拉斯", is_bot=True) for i in range(5)),
            message(40, 5_000, card="窗口外"),
        ]
    )
    speakers = await repo.speaker_counts(BOT, GROUP, since=T0, until=T0 + 1_000, limit=10)
    assert speakers == [
        SpeakerCount(KALTSIT, "凯尔希", 3),  # 3 each: the lower user id first
        SpeakerCount(AMIYA, "阿米娅🐰", 3),
        SpeakerCount(4_000_000_004, "群友#0004", 1),
    ]
    assert await repo.message_count(BOT, GROUP, since=T0, until=T0 + 1_000) == 7
    assert await repo.message_count(BOT, GROUP, since=T0, until=T0 + 10_000) == 8
    assert await repo.speaker_counts(BOT, OTHER_GROUP, since=T0, until=T0 + 1e4, limit=5) == []


async def test_messages_with_nul_surrogates_and_very_long_text(sessions) -> None:
    repo = MessageRepository(sessions)
    nul = message(
        1,
        1,
        "a\x00b",
        card="卡\x00片",
        nickname="\x00",
        segments=({"type": "text", "data": {"text": "a\x00b"}},),
    )
    broken = message(2, 2, "半个表情\ud83d", card="阿米娅\ud83d", nickname="\ud83d\ude00")
    huge = message(3, 3, "长" * (MAX_STORED_CHARS + 5_000) + "😀", card="名" * 300)
    assert await repo.add_many([nul, broken, huge]) == 3
    stored = await repo.find_by_message_ids(BOT, GROUP, [1, 2, 3])

    assert (stored[1].text, stored[1].raw_message, stored[1].card) == ("ab", "ab", "卡片")
    assert stored[1].nickname == ""
    assert stored[1].segments == ({"type": "text", "data": {"text": "a\x00b"}},)  # JSON escapes
    assert (stored[2].text, stored[2].card) == ("半个表情\ufffd", "阿米娅\ufffd")
    assert stored[2].nickname == "😀"  # a surrogate pair left as two code points is joined
    assert stored[3].text == "长" * MAX_STORED_CHARS and len(stored[3].card) == 128
    # a cleaned value still matches: the same message again is a duplicate
    assert await repo.add(nul) is False


async def test_concurrent_overlapping_batches_store_each_message_once(sessions) -> None:
    repo = MessageRepository(sessions)
    batches = [[message(i, i) for i in range(start, start + 50)] for start in range(0, 100, 10)]
    inserted = await asyncio.gather(*(repo.add_many(b) for b in batches))
    assert sum(inserted) == 140 and await repo.count() == 140


# ------------------------------------------------------------------------- message writer


async def test_writer_drops_only_a_refused_message_and_keeps_recording(sessions) -> None:
    """One message the database refuses must not block the batch, nor every batch after it."""
    repo = MessageRepository(sessions)
    writer = MessageWriter(repo, linger=0)
    writer.start()
    try:
        writer.submit(message(1, 1, "第一条"))
        writer.submit(message(2**64, 2, "超出 64 位的 id"))  # refused by either backend
        writer.submit(message(3, 3, "带\x00的消息"))
        await asyncio.wait_for(writer.flush(), 15)
        writer.submit(message(4, 4, "之后的消息"))
        await asyncio.wait_for(writer.flush(), 15)
    finally:
        await writer.close()
    assert (writer.written, writer.dropped) == (3, 1)
    rows = await repo.recent(BOT, GROUP, limit=10)
    assert [(m.message_id, m.text) for m in rows] == [
        (1, "第一条"),
        (3, "带的消息"),
        (4, "之后的消息"),
    ]


async def test_writer_keeps_everything_while_the_database_is_down(sessions) -> None:
    class Down(MessageRepository):
        failures = 3

        async def add_many(self, messages):  # type: ignore[no-untyped-def]
            if self.failures:
                self.failures -= 1
                raise ConnectionRefusedError(111, "Connect call failed")
            return await super().add_many(messages)

    repo = Down(sessions)
    writer = MessageWriter(repo, linger=0)
    writer.start()
    try:
        for i in range(5):
            writer.submit(message(i, i))
        await asyncio.wait_for(writer.flush(), 15)
    finally:
        await writer.close()
    assert (writer.written, writer.dropped) == (5, 0)
    assert await repo.count() == 5


# -------------------------------------------------------------------------- chat sessions


async def test_chat_sessions(sessions) -> None:
    repo = ChatSessionRepository(sessions)
    extra = {"images": [{"sha256": "ab" * 32, "w": 1080}], "n": MAX_ID, "ratio": 0.25, "x": None}
    turns = [
        SessionTurn(BOT, GROUP, AMIYA, "user", f"第{i}句 {EMOJI}", T0 + i, extra=extra)
        if i % 2 == 0
        else SessionTurn(BOT, GROUP, AMIYA, "assistant", f"回答{i}", T0 + i)
        for i in range(6)
    ]
    await repo.append(turns)
    await repo.append([SessionTurn(BOT, GROUP, KALTSIT, "user", "我也在", T0 + 10)])
    await repo.append([SessionTurn(BOT, 0, AMIYA, "user", "私聊\x00内容", T0 + 11)])  # private
    await repo.append([])

    mine = await repo.recent_for_user(BOT, GROUP, AMIYA, limit=3)
    assert [t.content for t in mine] == ["回答3", f"第4句 {EMOJI}", "回答5"]
    assert mine[1].extra == extra and mine[0].extra == {} and mine[1].is_summary is False
    assert await repo.count_for_user(BOT, GROUP, AMIYA) == 6
    assert [t.content for t in await repo.all_for_user(BOT, 0, AMIYA)] == ["私聊内容"]
    group = await repo.recent_for_group(BOT, GROUP, limit=10, exclude_user_id=AMIYA)
    assert [t.user_id for t in group] == [KALTSIT]
    assert await repo.latest_summary(BOT, GROUP, AMIYA) is None

    rows = await repo.all_for_user(BOT, GROUP, AMIYA)
    covers = {"covers": [r.row_id for r in rows[:4]]}
    text_ = "【此前对话摘要】" + "很长" * 20_000
    summary = SessionTurn(BOT, GROUP, AMIYA, "user", text_, T0 + 20, is_summary=True, extra=covers)
    await repo.replace_with_summary(summary, [r.row_id for r in rows[:4]])
    left = await repo.all_for_user(BOT, GROUP, AMIYA)
    assert [t.content for t in left[:2]] == [f"第4句 {EMOJI}", "回答5"]
    latest = await repo.latest_summary(BOT, GROUP, AMIYA)
    assert latest is not None and latest.content == summary.content and latest.is_summary
    assert latest.extra == covers
    assert all(not t.is_summary for t in await repo.recent_for_group(BOT, GROUP, limit=10))

    assert await repo.delete_for_user(BOT, GROUP, AMIYA) == 3
    assert await repo.delete_for_user(BOT, None, AMIYA) == 1  # every group and private chat
    assert await repo.count_for_user(BOT, GROUP, KALTSIT) == 1


# ------------------------------------------------------------------ usage and snapshots


async def test_usage_ledger_upserts_per_day_and_key(sessions) -> None:
    repo = UsageRepository(sessions)
    long_model = "m" * 200

    async def record(**kw: object) -> None:
        values: dict = {"now": T0, "bot_id": BOT, "group_id": GROUP, "task": "chat"}
        values |= {"model": "gpt-x", "prompt_tokens": 100, "completion_tokens": 20, **kw}
        await repo.record(UsageEntry(**values))

    await asyncio.gather(*(record() for _ in range(10)))  # concurrent upserts of one key
    await record(failed=True, prompt_tokens=3_000_000_000, completion_tokens=0)  # BIGINT sums
    await record(task="cheap", model=long_model)
    await record(group_id=OTHER_GROUP)
    await record(now=T0 + 86_400)  # the next China day: another row

    assert await repo.totals(now=T0, bot_id=BOT, group_id=GROUP, task="chat") == UsageTotals(
        calls=11, failures=1, prompt_tokens=3_000_001_000, completion_tokens=200
    )
    everything = await repo.totals(now=T0)
    assert (everything.calls, everything.tokens) == (13, 3_000_001_000 + 200 + 240)
    assert await repo.totals(now=T0, task="cheap") == UsageTotals(1, 0, 100, 20)
    assert await repo.totals(now=T0 + 86_400) == UsageTotals(1, 0, 100, 20)
    assert await repo.totals(now=T0 - 86_400) == UsageTotals()
    assert await repo.group_totals(now=T0, task="chat") == {
        (BOT, GROUP): UsageTotals(11, 1, 3_000_001_000, 200),
        (BOT, OTHER_GROUP): UsageTotals(1, 0, 100, 20),
    }
    assert await repo.group_totals(now=T0 - 86_400) == {}


async def test_every_groups_usage_counters_are_seeded_in_one_query(sessions) -> None:
    repo = CountingLedger(sessions)
    for group, calls in ((GROUP, 3), (OTHER_GROUP, 1)):
        for _ in range(calls):
            await repo.record(UsageEntry(T0, BOT, group, "chat", "m", 40, 10))
    counters = UsageCounters(MemoryStateStore(FakeClock(T0)), repo)
    await counters.today(T0, OTHER_GROUP)  # a turn seeded its group first (2 queries)
    assert repo.queries == 2
    assert await counters.seed_every_group(T0) == 1  # GROUP; OTHER_GROUP and all were seeded
    assert repo.queries == 3
    for group, calls in ((GROUP, 3), (OTHER_GROUP, 1), (THIRD_GROUP, 0)):
        usage = await counters.today(T0, group)
        assert (usage.chat.calls, usage.chat.tokens) == (calls, 50 * calls)
        assert usage.deployment.calls == 4, "no call counted twice"
    assert repo.queries == 3, "a group without ledger rows reads no ledger"
    assert await counters.seed_every_group(T0) == 0 and repo.queries == 3  # once a day


class CountingLedger(UsageRepository):
    queries = 0

    async def totals(self, **kw):  # type: ignore[no-untyped-def]
        self.queries += 1
        return await super().totals(**kw)

    async def group_totals(self, **kw):  # type: ignore[no-untyped-def]
        self.queries += 1
        return await super().group_totals(**kw)


async def test_snapshots_save_prune_and_find(sessions) -> None:
    repo = SnapshotRepository(sessions, keep_per_group=3)
    for i in range(5):
        await repo.save(
            InjectionSnapshot(
                turn_id=f"turn-{i}",
                bot_id=BOT,
                group_id=GROUP,
                user_id=AMIYA,
                message_id=MAX_ID - i,
                created_at=T0 + i,
                model="gpt-x" * 40,
                outcome="error:" + "x" * 60,
                data={"sent_message_ids": [MIN_ID + i], "blocks": {"记忆": [EMOJI, 1.5, None]}},
            )
        )
    await repo.save(InjectionSnapshot("other", BOT, OTHER_GROUP, AMIYA, 1, T0, "m", "ok", {}))

    latest = await repo.latest(GROUP, limit=10)
    assert [s.turn_id for s in latest] == ["turn-4", "turn-3", "turn-2"]  # the rest pruned
    assert latest[0].data["blocks"] == {"记忆": [EMOJI, 1.5, None]}
    assert len(latest[0].model) == 128 and len(latest[0].outcome) == 32
    assert [s.turn_id for s in await repo.latest(GROUP, bot_id=BOT + 1)] == []
    by_turn = await repo.by_turn("turn-3")
    assert by_turn is not None and by_turn.message_id == MAX_ID - 3
    assert await repo.by_turn("turn-0") is None
    found = await repo.by_bot_message(BOT, GROUP, MIN_ID + 2)
    assert found is not None and found.turn_id == "turn-2"
    assert [s.turn_id for s in await repo.latest(OTHER_GROUP)] == ["other"]


# ---------------------------------------------------------------- topics and image cache


async def test_session_topics_and_image_descriptions(sessions) -> None:
    topics = SessionTopicRepository(sessions)
    ids = [
        await topics.add(
            SessionTopic(
                BOT,
                group,
                user,
                f"group:{BOT}:{group}",
                text,
                T0 - 100,
                T0 - 10,
                created_at=T0 + i,
                turn_count=8,
            )
        )
        for i, (group, user, text) in enumerate(
            [
                (GROUP, AMIYA, "在学吉他\x00，卡在F和弦" + "。" * 3_000),
                (GROUP, AMIYA, f"最近在减肥 {EMOJI}"),
                (GROUP, KALTSIT, "别人的话题"),
                (OTHER_GROUP, AMIYA, "别的群"),
            ]
        )
    ]
    assert ids == sorted(ids) and len(set(ids)) == 4
    mine = await topics.for_subject(BOT, GROUP, AMIYA, limit=10)
    assert [t.row_id for t in mine] == [ids[1], ids[0]]  # newest first
    assert mine[1].text.startswith("在学吉他，卡在F和弦")
    assert len(mine[1].text) == 1_999  # cut to 2,000 by the repository, then the NUL dropped
    assert await topics.count_since(BOT, GROUP, T0 + 1) == 2
    await topics.touch([ids[0], ids[0], ids[3]], T0 + 99)
    await topics.touch([], T0)
    touched = {t.row_id: t for t in await topics.for_subject(BOT, GROUP, AMIYA, limit=10)}
    assert (touched[ids[0]].access_count, touched[ids[0]].last_access_at) == (1, T0 + 99)
    assert (touched[ids[1]].access_count, touched[ids[1]].last_access_at) == (0, None)

    images = ImageDescriptionRepository(sessions)
    sha_a, sha_b = "a" * 64, "b" * 64
    await images.put_many({sha_a: "一只小羊\x00🐑", "": "无"}, model="vision" * 30, now=T0)
    await images.put_many({sha_a: "第二次描述", sha_b: "一张截图"}, model="v", now=T0 + 1)
    assert await images.get_many([sha_a, sha_b, "c" * 64, ""]) == {
        sha_a: "一只小羊🐑",  # the first description is kept
        sha_b: "一张截图",
    }


# -------------------------------------------------------------------------------- memory


def memory(text: str, *, scope: str, key: str, subject: int | None = AMIYA, **kw) -> NewMemory:
    values: dict = {"now": T0, "source": {"message_ids": [MAX_ID]}, **kw}
    return NewMemory(BOT, scope, "person_facts", key, text.lower(), text, "extract",
                     subject_user_id=subject, author_user_id=KALTSIT, **values)  # fmt: skip


async def test_memory_store_and_retrieval(sessions) -> None:
    repo = MemoryRepository(sessions)
    here, pool = group_scope(BOT, GROUP), pool_scope("arknights")
    first = await repo.upsert(
        memory("养了一只橘猫\x00🐱", scope=here, key="pet", subject_name="阿米娅")
    )
    again = await repo.upsert(memory("养了一只橘猫\x00🐱", scope=here, key="pet",
                                     source={"message_ids": [MIN_ID]}, now=T0 + 5))  # fmt: skip
    assert (first.action, again.action) == ("added", "duplicate")
    assert again.item.id == first.item.id and again.item.text == "养了一只橘猫🐱"
    assert again.item.source == {"message_ids": [MAX_ID, MIN_ID]}

    newer = await repo.upsert(memory("养了两只狗", scope=here, key="pet", now=T0 + 10))
    assert newer.action == "replaced" and newer.replaced_ids == (first.item.id,)
    old = await repo.get(first.item.id)
    assert old is not None and old.delete_reason == "replaced" and old.replaced_by == newer.item.id

    long_text = await repo.upsert(memory("长" * 5_000, scope=here, key="k" * 300, now=T0 + 11))
    assert len(long_text.item.text) == 1_000 and len(long_text.item.key) == 128
    other = await repo.upsert(memory("在别的群", scope=group_scope(BOT, OTHER_GROUP), key="x"))
    private = await repo.upsert(memory("私聊里说的", scope=private_scope(BOT, AMIYA), key="y"))
    shared = await repo.upsert(
        replace(memory("源石是一种矿物", scope=pool, key="ore", subject=None), kind="ip_knowledge")
    )

    await repo.set_embedding(newer.item.id, [0.125, -1.5, 3e-8])
    [(_, _, vector)] = await repo.vectors([newer.item.id])
    assert vector == [0.125, -1.5, pytest.approx(3e-8, rel=1e-7)]  # stored as float32
    assert await repo.touch([newer.item.id, newer.item.id, 987_654], T0 + 50) == 1
    assert await repo.touch([], T0) == 0

    live = await repo.candidates([here], "person_facts", subject_user_id=AMIYA)
    assert [i.id for i in live] == [newer.item.id, long_text.item.id]  # most recently used first
    assert live[0].access_count == 1 and live[0].last_access_at == T0 + 50
    assert [i.id for i in await repo.candidates([here], "person_facts", limit=1)] == [newer.item.id]
    assert await repo.candidates([], "person_facts") == []
    assert [i.id for i in await repo.candidates([pool], "ip_knowledge")] == [shared.item.id]
    assert await repo.count_live([here]) == 2 and await repo.count_live([here, pool]) == 3
    assert await repo.count_live([pool], "person_facts") == 0

    assert await repo.soft_delete([other.item.id], now=T0, reason="admin", scopes=[here]) == []
    gone = await repo.soft_delete([other.item.id], now=T0, reason="admin" * 10)
    assert [i.delete_reason for i in gone] == ["admin" * 6 + "ad"]  # cut to 32
    forgotten = await repo.forget_subject(
        AMIYA, now=T0 + 60, kinds=["person_facts"], scopes=[here, private_scope(BOT, AMIYA)],
        bot_id=BOT,
    )  # fmt: skip
    assert {i.id for i in forgotten} == {newer.item.id, long_text.item.id, private.item.id}
    listed = await repo.list_items(scopes=None, include_deleted=True, limit=100)
    assert [i.id for i in listed] == sorted((i.id for i in listed), reverse=True)
    assert {i.id for i in await repo.list_items(scopes=None)} == {shared.item.id}
    assert [i.id for i in await repo.list_items(bot_id=BOT, kind="ip_knowledge")] == [
        shared.item.id
    ]
    by_subject = await repo.list_items(subject_user_id=AMIYA, include_deleted=True, limit=100)
    assert len(by_subject) == 5


# ------------------------------------------------------------------------------ learning


def pair(trigger_id: int, response_id: int, response: str, **kw: object) -> ReplyPair:
    values: dict = {"group_id": GROUP, "learning_type": LearningType.OBSERVED, **kw}
    return ReplyPair(trigger_id, response_id, "快下班了\x00吗", response, PairKind.QUOTE, AMIYA,
                     KALTSIT, T0, bot_id=BOT, response_row_id=response_id, **values)  # fmt: skip


async def test_learning_pairs_labels_strategies_profile(sessions) -> None:
    repo = LearningRepository(sessions)
    pairs = [pair(MIN_ID, MAX_ID, "确实😀"), pair(-5, 7, "开空调" * 3_000)]
    assert await repo.add_pairs([*pairs, pair(1, 2, "别家的", group_id=OTHER_GROUP)], now=T0) == 3
    assert await repo.add_pairs(pairs, now=T0 + 1) == 0  # idempotent per (trigger, response)
    reflection = pair(8, 9, "被接住了", learning_type=LearningType.SELF_REFLECTION,
                      context_text="帕拉斯：在呢")  # fmt: skip
    assert await repo.add_pairs([reflection], now=T0) == 1

    observed = await repo.pairs(BOT, GROUP)
    assert [p.response_text for p in observed] == ["确实😀", "开空调" * 3_000]
    assert observed[0].trigger_text == "快下班了吗" and observed[0].key == (MIN_ID, MAX_ID)
    assert len(await repo.pairs(BOT, GROUP, learning_type=None)) == 3
    found = await repo.pairs_by_keys(BOT, GROUP, [(MIN_ID, MAX_ID), (8, 9), (1, 2)])
    assert set(found) == {(MIN_ID, MAX_ID), (8, 9)}
    assert found[(8, 9)].context_text == "帕拉斯：在呢"

    label = PairLabel(MIN_ID, MAX_ID, LearningType.OBSERVED, "有人抱怨下班晚" * 10, "附和" * 60,
                      3, True, "对方笑了", T0, BOT, GROUP)  # fmt: skip
    assert await repo.add_labels([label, replace(label, trigger_id=-5, response_id=7)], now=T0) == 2
    assert await repo.add_labels([replace(label, situation="再标一次")], now=T0) == 0
    labels = await repo.labels(BOT, GROUP)
    assert [lb.key for lb in labels] == [(MIN_ID, MAX_ID), (-5, 7)]
    assert len(labels[0].situation) == 64 and len(labels[0].interaction_action) == 96
    assert labels[0].transferable is True and labels[0].intensity == 3

    def strategy(situation: str, score: float) -> BehaviorStrategy:
        return BehaviorStrategy(
            situation, "接一句", "", LearningType.OBSERVED, 2, score, BOT, GROUP
        )

    await repo.replace_strategies(BOT, GROUP, [strategy("甲", 1.0), strategy("乙", 3.5)], now=T0)
    await repo.replace_strategies(BOT, GROUP, [strategy("丙", 0.5), strategy("丁", 2.0)], now=T0)
    assert [s.situation for s in await repo.strategies(BOT, GROUP)] == ["丁", "丙"]
    assert await repo.strategies(BOT, OTHER_GROUP) == []

    profile = GroupReplyProfile(BOT, GROUP, 40, 55, 1.0, 3.0, 8.5, 21.0, 0.7)
    assert await repo.profile(BOT, GROUP) is None
    await repo.save_profile(profile, last_row_id=MAX_ID, now=T0)
    await repo.save_profile(replace(profile, sample_turns=41), last_row_id=MAX_ID - 1, now=T0 + 1)
    stored = await repo.profile(BOT, GROUP)
    assert stored is not None and stored.profile == replace(profile, sample_turns=41)
    assert (stored.last_row_id, stored.updated_at) == (MAX_ID - 1, T0 + 1)

    counts = await repo.counts(BOT, GROUP)
    assert (counts.observed_pairs, counts.reflection_pairs, counts.labels, counts.strategies) == (
        2, 1, 2, 2,
    )  # fmt: skip


async def test_learning_cursors_sweep_position_and_message_reads(sessions) -> None:
    repo = LearningRepository(sessions)
    assert await repo.cursor(BOT, GROUP) == CursorState(BOT, GROUP)
    state = CursorState(BOT, GROUP, last_row_id=42, pairs_total=MAX_ID, last_error="e" * 100)
    await repo.save_cursor(state.with_spend("2026-11-30", 2, 3_000_000_000))
    await repo.save_cursor(replace(state, last_row_id=50).with_spend("2026-11-30", 1, 5))
    await repo.save_cursor(CursorState(BOT, OTHER_GROUP, last_row_id=7))
    loaded = await repo.cursor(BOT, GROUP)
    assert loaded.last_row_id == 50 and loaded.pairs_total == MAX_ID
    assert loaded.spent_on("2026-11-30") == (1, 5) and len(loaded.last_error) == 64
    assert set(await repo.cursors()) == {(BOT, GROUP), (BOT, OTHER_GROUP)}

    assert await repo.sweep_position() is None
    await repo.save_sweep_position((BOT, OTHER_GROUP), now=T0)
    await repo.save_sweep_position((BOT, GROUP), now=T0 + 1)
    assert await repo.sweep_position() == (BOT, GROUP)
    await repo.save_sweep_position(None, now=T0 + 2)
    assert await repo.sweep_position() is None

    messages = MessageRepository(sessions)
    await messages.add_many([message(i, i) for i in range(10)])
    rows = await messages.since_row(BOT, GROUP, 0, limit=100)
    assert await repo.count_rows_after(BOT, GROUP, rows[3].row_id) == 6
    assert [m.message_id for m in await repo.rows_up_to(BOT, GROUP, rows[5].row_id, limit=3)] == [
        3, 4, 5,
    ]  # fmt: skip
    assert await repo.rows_up_to(BOT, GROUP, 0, limit=3) == []


async def test_learning_feedback_is_one_row_per_key(sessions) -> None:
    repo = FeedbackRepository(sessions)
    blames = (
        Blame("expression", f"pair:{MIN_ID}:{MAX_ID}", -3.0, "确实😀"),
        Blame("memory", "mem:1", -0.5),
    )
    outcome = FeedbackOutcome(BOT, GROUP, MAX_ID, AMIYA, T0, "不可以", blames, "好\x00的",
                              ("worldbook", "群表达"))  # fmt: skip
    first = await repo.save(outcome, turn_id="t" * 100)
    again = await repo.save(replace(outcome, created_at=T0 + 5, word="不行"), turn_id="t2")
    assert first.id == again.id and again.turn_id == "t2"
    assert again.outcome == replace(outcome, created_at=T0 + 5, word="不行", bot_text="好的")
    assert len(first.turn_id) == 64
    await repo.save(replace(outcome, bot_message_id=MIN_ID, created_at=T0 + 9))

    assert [f.outcome.bot_message_id for f in await repo.for_group(BOT, GROUP)] == [MIN_ID, MAX_ID]
    assert len(await repo.for_group(BOT, GROUP, since=T0 + 6)) == 1
    assert len(await repo.for_group(BOT, GROUP, bot_message_id=MAX_ID)) == 1
    await repo.set_undone(first.id, T0 + 30)
    stored = await repo.by_key(outcome.key)
    assert stored is not None and stored.outcome.undone_at == T0 + 30
    await repo.set_undone(first.id, None)
    assert (await repo.by_id(BOT, GROUP, first.id)).outcome.undone_at is None  # type: ignore[union-attr]
    assert await repo.by_id(BOT, OTHER_GROUP, first.id) is None
