"""The reply path's warm caches answer exactly as the repositories do (each backend).

`MessageCache` (the newest lines of each group, fed where messages are recorded) against
`MessageRepository.recent`, and `SessionCache` (session windows fed by the session repository)
against `ChatSessionRepository`, over the same histories: message ids out of order, equal
times, the bot's own lines, duplicates, late backlog lines, many groups, LRU eviction, summary
rewrites and `/forget`. Row ids of warm timeline rows are None (not used on the reply path).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace

import pytest
from sqlalchemy.ext.asyncio import async_sessionmaker

from pallas.core.db import migrate
from pallas.core.db.engine import create_engine, session_factory
from pallas.core.db.message_cache import MessageCache, stored_form
from pallas.core.db.repositories.chat_sessions import ChatSessionRepository
from pallas.core.db.repositories.messages import MessageRepository
from pallas.core.db.repositories.snapshots import InjectionSnapshot, SnapshotRepository
from pallas.core.db.repositories.usage import UsageEntry, UsageRepository
from pallas.core.db.session_cache import SessionCache
from pallas.core.records import SessionTurn, StoredMessage

BOT, BOT2 = 9_000, 9_001
GROUPS = (501, 502, 503)
NOW = 1_790_000_000.0


@dataclass
class Env:
    sessions: async_sessionmaker
    messages: MessageRepository
    chat: ChatSessionRepository


@pytest.fixture
async def env(database_url: str) -> AsyncIterator[Env]:
    await migrate.upgrade(database_url)
    engine = create_engine(database_url)
    sessions = session_factory(engine)
    # queued turns wait for a read or an explicit flush, never for a timer the test could lose
    # a race against on a loaded machine
    chat = ChatSessionRepository(sessions, linger=60.0)
    yield Env(sessions, MessageRepository(sessions), chat)
    await engine.dispose()


def _message(rng: random.Random, group: int, message_id: int, t: float, **kw) -> StoredMessage:
    user = kw.pop("user_id", 100 + rng.randrange(5))
    return StoredMessage(
        bot_id=kw.pop("bot_id", BOT),
        group_id=group,
        message_id=message_id,
        user_id=user,
        time=t,
        text=kw.pop("text", f"第{message_id}条"),
        raw_message="",
        segments=({"type": "text", "data": {"text": f"第{message_id}条"}},),
        card=f"群友{user}",
        **kw,
    )


def _history(seed: int, n: int) -> list[StoredMessage]:
    """Arrival order; ids not monotonic, times sometimes equal, some bot lines, duplicates."""
    rng = random.Random(seed)
    out: list[StoredMessage] = []
    for i in range(n):
        group = rng.choice(GROUPS)
        t = NOW + i // 3  # three lines share each second
        message_id = rng.randrange(-(2**40), 2**40)  # opaque, signed, out of order
        if rng.random() < 0.15:
            out.append(_message(rng, group, message_id, t, user_id=BOT, is_bot=True))
        else:
            out.append(_message(rng, group, message_id, t))
        if rng.random() < 0.05 and out:
            out.append(rng.choice(out))  # a duplicate delivery
    return out


def _plain(rows: list[StoredMessage]) -> list[StoredMessage]:
    return [replace(m, row_id=0) for m in rows]


async def _same_timelines(env: Env, warm: MessageCache, bot_id: int = BOT) -> None:
    for group in GROUPS:
        for limit in (1, 2, 5, 9, 16, 24, 40):
            got = await warm.recent(bot_id, group, limit=limit)
            want = await env.messages.recent(bot_id, group, limit=limit)
            assert _plain(got) == _plain(want), (group, limit)
            assert all(m.group_id == group for m in got)


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_warm_timeline_equals_the_repository(env: Env, seed: int) -> None:
    history = _history(seed, 240)
    await env.messages.add_many(history[:120])  # before the bot started
    warm = MessageCache(env.messages, per_group=24)
    await _same_timelines(env, warm)  # first touch: one DB read per group
    for message in history[120:]:  # recorded while the bot runs: noted at submit, then stored
        warm.note(message)
        await env.messages.add_many([message])
    await _same_timelines(env, warm)


async def test_noted_lines_are_seen_before_they_are_stored(env: Env) -> None:
    rng = random.Random(5)
    await env.messages.add_many([_message(rng, 501, i, NOW + i) for i in range(30)])
    warm = MessageCache(env.messages, per_group=24)
    await warm.recent(BOT, 501, limit=8)
    pending = [_message(rng, 501, 1000 + i, NOW + 100 + i) for i in range(3)]
    for message in pending:
        warm.note(message)  # the writer has not committed them yet
    got = await warm.recent(BOT, 501, limit=4)
    assert [m.message_id for m in got] == [29, 1000, 1001, 1002]
    assert got[-1] == stored_form(pending[-1])


async def test_a_late_backlog_line_lands_by_time_or_not_at_all(env: Env) -> None:
    rng = random.Random(6)
    await env.messages.add_many([_message(rng, 501, i, NOW + i) for i in range(40)])
    warm = MessageCache(env.messages, per_group=8)
    await warm.recent(BOT, 501, limit=8)
    late_inside = _message(rng, 501, 500, NOW + 35.5)  # older than the newest, in the window
    late_outside = _message(rng, 501, 501, NOW + 1.5)  # older than the window
    for message in (late_inside, late_outside):
        warm.note(message)
        await env.messages.add_many([message])
    for limit in (3, 6, 8):
        got = await warm.recent(BOT, 501, limit=limit)
        assert got == _plain(await env.messages.recent(BOT, 501, limit=limit))
    # wider than the window: the DB answers
    assert await warm.recent(BOT, 501, limit=20) == await env.messages.recent(BOT, 501, limit=20)


async def test_groups_never_mix_accounts_share_a_group_and_eviction_rebuilds(env: Env) -> None:
    """A group's window is the group's lines whichever account stored them (every account
    reads the same timeline); groups never mix."""
    rng = random.Random(7)
    rows = [
        _message(rng, g, i, NOW + i, bot_id=b)
        for i in range(60)
        for g in GROUPS
        for b in (BOT, BOT2)
    ]
    await env.messages.add_many(rows)
    warm = MessageCache(env.messages, per_group=10, max_groups=2)  # evicts constantly
    for _ in range(2):
        await _same_timelines(env, warm, BOT)
        await _same_timelines(env, warm, BOT2)
        for group in GROUPS:
            by_a = await warm.recent(BOT, group, limit=24)
            assert by_a == await warm.recent(BOT2, group, limit=24)
            assert {m.bot_id for m in by_a} == {BOT, BOT2}
        new = [
            _message(rng, g, 10_000 + rng.randrange(10**6), NOW + 100, bot_id=BOT) for g in GROUPS
        ]
        for message in new:
            warm.note(message)
            await env.messages.add_many([message])


async def test_a_line_arriving_during_the_first_read_is_not_lost(env: Env) -> None:
    rng = random.Random(8)
    await env.messages.add_many([_message(rng, 501, i, NOW + i) for i in range(10)])
    late = _message(rng, 501, 99, NOW + 50)

    arriving = [late]

    async def flush(_group_id: int) -> None:  # the writer stores a line arriving during the load
        while arriving:
            message = arriving.pop()
            warm.note(message)
            await env.messages.add_many([message])

    warm = MessageCache(env.messages, flush=flush, per_group=24)
    first = await warm.recent(BOT, 501, limit=3)  # raced by the late line: from the DB
    assert [m.message_id for m in first] == [8, 9, 99]
    assert await warm.recent(BOT, 501, limit=3) == _plain(first)  # now warm


async def test_lines_arriving_during_the_first_read_join_the_new_window(env: Env) -> None:
    rng = random.Random(18)
    await env.messages.add_many([_message(rng, 501, i, NOW + i // 2) for i in range(30)])
    stored_first = [_message(rng, 501, 100 + i, NOW + 20) for i in range(2)]  # before the read
    stored_after = [_message(rng, 501, 200 + i, NOW + 20) for i in range(3)]  # after it
    calls = 0
    plain_recent = env.messages.recent

    async def flush(_group_id: int) -> None:  # the writer: these lines arrive during the read
        for message in (*stored_first, *stored_after):
            warm.note(message)
        await env.messages.add_many(stored_first)

    async def recent(*args, **kwargs):
        nonlocal calls
        calls += 1
        return await plain_recent(*args, **kwargs)

    env.messages.recent = recent  # type: ignore[method-assign]
    warm = MessageCache(env.messages, flush=flush, per_group=24)
    await warm.recent(BOT, 501, limit=3)
    await env.messages.add_many(stored_after)  # the writer catches up
    assert calls == 1  # the window was built by that read: no second query
    for limit in (1, 5, 24):
        assert await warm.recent(BOT, 501, limit=limit) == _plain(
            await plain_recent(BOT, 501, limit=limit)
        )


async def test_a_reader_during_another_readers_load_sees_the_uncommitted_line(env: Env) -> None:
    """The group's background warm-up is loading the window when the @ reads it: the @ waits
    for that load (flushed first) instead of asking the DB, which lacks the queued line."""
    rng = random.Random(28)
    await env.messages.add_many([_message(rng, 501, i, NOW + i) for i in range(5)])
    queued = _message(rng, 501, 77, NOW + 30)  # handed to the writer, not committed yet
    release = asyncio.Event()

    async def flush(_group_id: int) -> None:  # the writer stores the queued line, slowly
        await release.wait()
        await env.messages.add_many([queued])

    warm = MessageCache(env.messages, flush=flush, per_group=24)
    warm.note(queued)  # no window yet: ignored, as at a group's first line
    warming = asyncio.ensure_future(warm.recent(BOT, 501, limit=1))  # the group's warm-up
    await asyncio.sleep(0)
    reading = asyncio.ensure_future(warm.recent(BOT, 501, limit=3))  # the @'s timeline
    await asyncio.sleep(0.01)
    assert not reading.done()  # it waits for the load instead of reading the DB
    release.set()
    assert [m.message_id for m in await reading] == [3, 4, 77]
    assert [m.message_id for m in await warming] == [77]


async def test_quoted_lines_come_from_the_window_or_the_db(env: Env) -> None:
    rng = random.Random(9)
    rows = [_message(rng, 501, i, NOW + i) for i in range(40)]
    await env.messages.add_many(rows)
    warm = MessageCache(env.messages, per_group=8)
    await warm.recent(BOT, 501, limit=4)
    found = await warm.find_by_message_ids(BOT, 501, [39, 2, 12345])
    want = await env.messages.find_by_message_ids(BOT, 501, [39, 2, 12345])
    assert {k: replace(v, row_id=0) for k, v in found.items()} == _plain_map(want)
    assert await warm.find_by_message_ids(BOT, 502, [39]) == {}  # another group: nothing


def _plain_map(rows: dict[int, StoredMessage]) -> dict[int, StoredMessage]:
    return {k: replace(v, row_id=0) for k, v in rows.items()}


# -- session windows --------------------------------------------------------------------------


def _turns(rng: random.Random, n: int, group: int = 501) -> list[SessionTurn]:
    out = []
    for i in range(n):
        user = 100 + rng.randrange(4)
        base = {"bot_id": BOT, "group_id": group, "user_id": user, "created_at": NOW + i // 2}
        out.append(SessionTurn(**base, role="user", content=f"问{i}"))
        out.append(SessionTurn(**base, role="assistant", content=f"答{i}"))
    return out


async def _same_sessions(env: Env, warm: SessionCache, group: int = 501) -> None:
    for user in range(100, 104):
        for limit in (1, 4, 18, 30):
            got = await warm.recent_for_user(BOT, group, user, limit=limit)
            assert got == await env.chat.recent_for_user(BOT, group, user, limit=limit)
        summary = await warm.latest_summary(BOT, group, user)
        assert summary == await env.chat.latest_summary(BOT, group, user)
        for limit in (0, 3, 8, 20):
            for exclude in (None, user):
                got = await warm.recent_for_group(BOT, group, limit=limit, exclude_user_id=exclude)
                want = await env.chat.recent_for_group(
                    BOT, group, limit=limit, exclude_user_id=exclude
                )
                assert got == want, (user, limit, exclude)


async def test_warm_sessions_equal_the_repository_through_changes(env: Env) -> None:
    rng = random.Random(11)
    await env.chat.append(_turns(rng, 30))
    await env.chat.append(_turns(rng, 5, group=502))  # never leaks into 501
    warm = SessionCache(env.chat, user_window=12, group_window=10)
    await _same_sessions(env, warm)
    for pair in range(6):  # reply turns append write-behind
        env.chat.append_later(_turns(rng, 1)[0:2])
        if pair % 2:
            await asyncio.sleep(0.08)  # stored by the background task
        await _same_sessions(env, warm)
    # a summary replaces a member's oldest turns
    rows = await env.chat.all_for_user(BOT, 501, 101)
    summary = SessionTurn(BOT, 501, 101, "user", "摘要", NOW + 500, is_summary=True)
    await env.chat.replace_with_summary(summary, [r.row_id for r in rows[:-4]])
    await _same_sessions(env, warm)
    await env.chat.delete_for_user(BOT, 501, 102)  # /forget
    await _same_sessions(env, warm)
    await _same_sessions(env, warm, group=502)


class _CountingRepo:
    """Counts the DB reads `SessionCache` makes through the real repository."""

    def __init__(self, repo: ChatSessionRepository) -> None:
        self.reads: list[str] = []
        for name in ("recent_for_user", "latest_summary", "recent_for_group", "user_ids"):
            setattr(repo, name, self._counted(name, getattr(repo, name)))

    def _counted(self, name, method):
        async def counted(*args, **kwargs):
            self.reads.append(name)
            return await method(*args, **kwargs)

        return counted


async def test_a_member_new_to_a_known_group_costs_no_query(env: Env) -> None:
    rng = random.Random(5)
    await env.chat.append(_turns(rng, 10))  # members 100-103 of group 501
    await env.chat.append([SessionTurn(BOT, 502, 300, "user", "别的群", NOW)])
    warm = SessionCache(env.chat, user_window=12, group_window=10)
    counting = _CountingRepo(env.chat)
    assert await warm.recent_for_user(BOT, 501, 100, limit=4)  # a known member: loaded
    counting.reads.clear()
    for user in (300, 400, 401):  # 300 speaks in group 502 only: new here all the same
        turns, summary = await asyncio.gather(
            warm.recent_for_user(BOT, 501, user, limit=12), warm.latest_summary(BOT, 501, user)
        )
        assert (turns, summary) == ([], None)
    assert counting.reads == []
    # the new member's first turns join the window; the group's other windows stay right
    env.chat.append_later([SessionTurn(BOT, 501, 400, "user", "第一次", NOW + 50)])
    await _same_sessions(env, warm)
    assert [t.content for t in await warm.recent_for_user(BOT, 501, 400, limit=4)] == ["第一次"]
    assert await warm.recent_for_user(BOT, 502, 400, limit=4) == []
    # /forget everywhere: the member is new again, and still reads as the DB does
    await env.chat.delete_for_user(BOT, None, 400)
    assert await warm.recent_for_user(BOT, 501, 400, limit=4) == []
    await env.chat.append([SessionTurn(BOT, 501, 400, "user", "又来了", NOW + 60)])
    got = await warm.recent_for_user(BOT, 501, 400, limit=4)
    assert got == await env.chat.recent_for_user(BOT, 501, 400, limit=4)


async def test_concurrent_reads_of_a_cold_member_share_one_load(env: Env) -> None:
    rng = random.Random(6)
    await env.chat.append(_turns(rng, 10))
    summary = SessionTurn(BOT, 501, 101, "user", "摘要", NOW + 500, is_summary=True)
    await env.chat.replace_with_summary(summary, [])
    warm = SessionCache(env.chat, user_window=48, group_window=10)
    counting = _CountingRepo(env.chat)
    turns, latest, again = await asyncio.gather(
        warm.recent_for_user(BOT, 501, 101, limit=48),
        warm.latest_summary(BOT, 501, 101),
        warm.latest_summary(BOT, 501, 101),
    )
    assert turns == await env.chat.recent_for_user(BOT, 501, 101, limit=48)
    assert latest == again == await env.chat.latest_summary(BOT, 501, 101)
    assert sorted(counting.reads[:3]) == ["latest_summary", "recent_for_user", "user_ids"]


# -- write-behind -------------------------------------------------------------------------------


async def test_snapshots_and_usage_written_behind_are_read_and_survive_a_flush(env: Env) -> None:
    snapshots = SnapshotRepository(env.sessions, keep_per_group=3)
    for i in range(5):
        snapshots.save_later(
            InjectionSnapshot(f"t{i}", BOT, 501, 100, i, NOW + i, "m", "delivered", {"i": i})
        )
    assert [s.turn_id for s in await snapshots.latest(501, bot_id=BOT, limit=5)] == [
        "t4",
        "t3",
        "t2",
    ]
    usage = UsageRepository(env.sessions)
    for _ in range(3):
        usage.record_later(
            UsageEntry(
                now=NOW,
                bot_id=BOT,
                group_id=501,
                task="chat",
                model="m",
                prompt_tokens=10,
                completion_tokens=2,
            )
        )
    snapshots.save_later(InjectionSnapshot("t9", BOT, 501, 100, 9, NOW, "m", "silent", {}))
    await snapshots.flush()
    await usage.flush()
    other = SnapshotRepository(env.sessions)  # another reader (the console process)
    assert (await other.by_turn("t9")) is not None
    totals = await UsageRepository(env.sessions).totals(now=NOW, bot_id=BOT)
    assert (totals.calls, totals.prompt_tokens, totals.completion_tokens) == (3, 30, 6)


def _turn(user: int, content: str, group: int = 501) -> SessionTurn:
    return SessionTurn(BOT, group, user, "user", content, NOW)


async def test_a_member_s_count_includes_queued_turns_without_storing_them(env: Env) -> None:
    """The summary hook counts a member's turns after every reply: stored + queued, exact, and
    the write-behind queue is left to its batch (no transaction per reply)."""
    await env.chat.append([_turn(101, f"旧{i}") for i in range(3)])
    env.chat.append_later([_turn(101, "新1"), _turn(101, "新2"), _turn(102, "别人")])
    env.chat.append_later([_turn(101, "别群", group=502)])
    assert await env.chat.count_for_user(BOT, 501, 101) == 5
    assert await env.chat.count_for_user(BOT, 501, 102) == 1
    assert await env.chat.count_for_user(BOT, 502, 101) == 1
    assert env.chat.has_pending(BOT, 501)  # still queued: counting did not store them
    # a batch being stored while counting: counted once, in the table or in the queue
    flushing = asyncio.ensure_future(env.chat.flush())
    await asyncio.sleep(0)
    counts = await asyncio.gather(*(env.chat.count_for_user(BOT, 501, 101) for _ in range(3)))
    await flushing
    assert counts == [5, 5, 5]
    assert not env.chat.has_pending(BOT, 501)
    assert await env.chat.count_for_user(BOT, 501, 101) == 5
    assert len(await env.chat.all_for_user(BOT, 501, 101)) == 5


async def test_a_read_stores_the_queued_turns_it_would_read_and_leaves_the_others(
    env: Env,
) -> None:
    """A group's (or member's) read sees its queued turns; other groups' and members' queued
    turns stay queued for their batch (a cold @ in one group does not wait for the commit of
    every reply the bot just sent elsewhere)."""
    await env.chat.append([_turn(101, "旧")])
    env.chat.append_later([_turn(101, "新"), _turn(102, "别人"), _turn(103, "别群", group=502)])
    mine = await env.chat.recent_for_user(BOT, 501, 101, limit=10)
    assert [t.content for t in mine] == ["旧", "新"]
    assert all(t.row_id for t in mine)  # stored: row ids as always
    # the whole queue went out together (one batch, order kept) — but only because 501's was in it
    assert not env.chat.has_pending(BOT, 502)
    env.chat.append_later([_turn(104, "又一个", group=502)])
    assert await env.chat.user_ids(BOT, 501) == {101, 102}
    assert env.chat.has_pending(BOT, 502), "reading group 501 left group 502's turn queued"
    assert [t.content for t in await env.chat.recent_for_group(BOT, 501, limit=10)] == [
        "旧", "新", "别人"
    ]  # fmt: skip
    assert env.chat.has_pending(BOT, 502)
    env.chat.append_later([_turn(102, "再说", group=501)])
    assert await env.chat.latest_summary(BOT, 501, 101) is None
    assert env.chat.has_pending(BOT, 501), "member 101's read left member 102's turn queued"
    assert await env.chat.user_ids(BOT, 502) == {103, 104}
    assert not env.chat.has_pending(BOT, 502) and not env.chat.has_pending(BOT, 501)
    assert [t.content for t in await env.chat.all_for_user(BOT, 501, 102)] == ["别人", "再说"]


async def test_a_read_waits_for_a_batch_of_its_group_being_stored(env: Env) -> None:
    """A batch being written stays queued until stored: a read of its group waits for it."""
    env.chat.append_later([_turn(101, "正在写")])
    flushing = asyncio.ensure_future(env.chat.flush())
    await asyncio.sleep(0)  # the batch is being written
    turns = await env.chat.recent_for_user(BOT, 501, 101, limit=5)
    await flushing
    assert [t.content for t in turns] == ["正在写"]


async def test_a_first_read_merges_the_writers_unstored_lines_without_waiting(
    env: Env,
) -> None:
    """The window's first read takes the writer's not-yet-stored lines of the group (listed
    before the read) instead of flushing: same timeline as the repository once all is stored,
    a line both stored and listed counted once, other groups' lines left out (another
    account's line of the group is the group's)."""
    rng = random.Random(38)
    stored = [_message(rng, 501, i, NOW + i) for i in range(30)]
    await env.messages.add_many(stored)
    committed_meanwhile = _message(rng, 501, 40, NOW + 40)  # listed, and stored by the read
    unstored = [committed_meanwhile, *(_message(rng, 501, 41 + i, NOW + 41) for i in range(3))]
    await env.messages.add_many([committed_meanwhile])

    async def flush(_group_id: int) -> None:
        raise AssertionError("the first read must not wait for the writer")

    other_bot = _message(rng, 501, 90, NOW + 90, bot_id=BOT2)
    other_group = _message(rng, 502, 91, NOW + 91)
    warm = MessageCache(
        env.messages,
        flush=flush,
        unstored=lambda group: [
            m for m in (*unstored, other_bot, other_group) if m.group_id == group
        ],
        per_group=24,
    )
    first = await warm.recent(BOT, 501, limit=5)
    assert [m.message_id for m in first] == [40, 41, 42, 43, 90]
    await env.messages.add_many([*unstored[1:], other_bot])  # the writer catches up
    for limit in (1, 5, 24):
        assert await warm.recent(BOT, 501, limit=limit) == _plain(
            await env.messages.recent(BOT, 501, limit=limit)
        )
