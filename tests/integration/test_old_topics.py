"""【相关旧话题】 recall from the `session_topic` archive (a real database of each backend)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from pallas.config import GroupConfig
from pallas.context import sections as S
from pallas.context.context import GatherRequest
from pallas.core.db import migrate
from pallas.core.db.engine import create_engine, session_factory
from pallas.core.db.repositories.chat_sessions import ChatSessionRepository
from pallas.core.records import SessionTurn
from pallas.core.turn import TurnInput
from pallas.features.session.old_topics import OldTopicsSource
from pallas.features.session.repository import SessionTopic, SessionTopicRepository
from pallas.features.session.summary_rules import format_summary_row
from pallas.ranking.scoring import frequency_term, recency_term

BOT, GROUP, OTHER_GROUP, ALICE, BOB = 2_900_000_001, 62_000_001, 62_000_002, 5_001, 5_002
NOW = 1_780_000_000.0
GUITAR = "用户在学吉他，卡在F和弦，帕拉斯建议每天慢练十分钟"


@pytest.fixture
async def stores(
    database_url: str,
) -> AsyncIterator[tuple[SessionTopicRepository, ChatSessionRepository]]:
    await migrate.upgrade(database_url)
    engine = create_engine(database_url)
    factory = session_factory(engine)
    topics = SessionTopicRepository(factory)
    yield topics, ChatSessionRepository(factory)
    await topics.flush()  # its queued recalls before the engine goes (`PallasApp.stop`'s order)
    await engine.dispose()


async def archive(topics: SessionTopicRepository, text: str, *, group: int, user: int) -> int:
    return await topics.add(
        SessionTopic(
            bot_id=BOT,
            group_id=group,
            user_id=user,
            scope=f"group:{BOT}:{group}",
            text=text,
            first_turn_at=NOW - 5 * 86_400,
            last_turn_at=NOW - 4 * 86_400,
            created_at=NOW - 4 * 86_400,
            turn_count=8,
        )
    )


def request(text: str, *, user: int = ALICE, persistent: bool = True) -> GatherRequest:
    return GatherRequest(
        turn=TurnInput(BOT, GROUP, user, message_id=1, time=NOW, text=text),
        current_text=text,
        now=NOW,
        config=GroupConfig(),
        persona_name="帕拉斯",
        allow_persistent_memory=persistent,
        short_social=not persistent,
        addressed=True,
    )


async def test_recalls_the_members_own_topic_in_this_group_only(stores) -> None:
    topics, sessions = stores
    own = await archive(topics, GUITAR, group=GROUP, user=ALICE)
    await archive(topics, "用户在学吉他，想买一把新琴", group=OTHER_GROUP, user=ALICE)
    await archive(topics, "用户也在学吉他，F和弦按不响", group=GROUP, user=BOB)
    await archive(topics, "用户最近在减肥，晚饭只吃沙拉", group=GROUP, user=ALICE)
    source = OldTopicsSource(topics, sessions)

    contribution = await source.gather(request("F和弦还是按不响怎么办"))
    block = contribution.blocks[S.MID_TERM]
    assert block.text.startswith("【相关旧话题】")
    assert GUITAR in block.text and "（4天前）" in block.text
    assert "新琴" not in block.text and "按不响" not in block.text and "沙拉" not in block.text
    assert block.memory_ids == (f"topic:{own}",)
    [recalled] = [
        t for t in await topics.for_subject(BOT, GROUP, ALICE, limit=9) if t.row_id == own
    ]
    assert recalled.access_count == 1 and recalled.last_access_at == NOW


async def test_a_recall_is_written_behind_the_reply_and_flushed(stores) -> None:
    topics, sessions = stores
    own = await archive(topics, GUITAR, group=GROUP, user=ALICE)
    other_reader = SessionTopicRepository(topics._sessions)  # e.g. the console's process
    await OldTopicsSource(topics, sessions).gather(request("F和弦还是按不响怎么办"))

    async def stored_count() -> int:
        rows = await other_reader.for_subject(BOT, GROUP, ALICE, limit=9)
        return next(t.access_count for t in rows if t.row_id == own)

    assert await stored_count() == 0  # queued: the turn did not wait for the UPDATE
    await topics.flush()  # (PallasApp.stop flushes too)
    assert await stored_count() == 1


async def test_unrelated_message_recalls_nothing(stores) -> None:
    topics, sessions = stores
    await archive(topics, GUITAR, group=GROUP, user=ALICE)
    contribution = await OldTopicsSource(topics, sessions).gather(request("明天会下雨吗"))
    assert contribution.blocks == {}


async def test_short_social_turns_skip_old_topics(stores) -> None:
    topics, sessions = stores
    await archive(topics, GUITAR, group=GROUP, user=ALICE)
    contribution = await OldTopicsSource(topics, sessions).gather(
        request("吉他F和弦", persistent=False)
    )
    assert contribution.blocks == {}
    assert contribution.trace["skipped"] == "skipped_short_social_turn"


async def test_the_live_session_summary_is_not_recalled_twice(stores) -> None:
    topics, sessions = stores
    await archive(topics, GUITAR, group=GROUP, user=ALICE)
    await sessions.append(
        [
            SessionTurn(
                BOT, GROUP, ALICE, "user", format_summary_row(GUITAR), NOW - 100, is_summary=True
            )
        ]
    )
    contribution = await OldTopicsSource(topics, sessions).gather(request("F和弦怎么按"))
    assert contribution.blocks == {}


def _summary(text: str, at: float) -> SessionTurn:
    return SessionTurn(BOT, GROUP, ALICE, "user", format_summary_row(text), at, is_summary=True)


async def test_kept_topics_follow_recalls_and_new_summaries(stores) -> None:
    """One source across turns (rows kept warm) scores what the database holds: its own
    recalls are applied to the kept rows, a topic archived with a new summary is seen."""
    topics, sessions = stores
    await archive(topics, GUITAR, group=GROUP, user=ALICE)
    await sessions.append([_summary("用户最近在减肥，晚饭只吃沙拉", NOW - 300)])
    warm = OldTopicsSource(topics, sessions)
    query = request("F和弦还是按不响怎么办")

    for turn in range(3):  # each turn recalls and bumps the access count, kept rows too
        before = await topics.for_subject(BOT, GROUP, ALICE, limit=9)
        kept = await warm.gather(query)
        [scored] = kept.trace["candidates"]
        assert scored["freq"] == round(frequency_term(before[0].access_count), 4)
        assert scored["recency"] == (1.0 if turn else round(recency_term(4.0), 4))
        assert before[0].access_count == turn
    [row] = await topics.for_subject(BOT, GROUP, ALICE, limit=9)
    assert row.access_count == 3 and row.last_access_at == NOW

    # The live summary is archived as a topic, then a newer summary replaces it in the session.
    salad = await archive(topics, "用户最近在减肥，晚饭只吃沙拉", group=GROUP, user=ALICE)
    assert (await warm.gather(request("减肥晚饭吃沙拉"))).blocks == {}  # still the live one
    await sessions.append([_summary("用户在准备考研，每天早起背单词", NOW - 200)])
    recalled = await warm.gather(request("减肥晚饭吃沙拉"))
    assert recalled.blocks[S.MID_TERM].memory_ids == (f"topic:{salad}",)


async def test_a_topic_archived_by_a_summary_is_kept_without_reading_back(stores) -> None:
    """The summary hook writes the member's new summary, then archives the old one as a topic
    through the same repository: the kept rows take the new topic in place (no read on the
    member's next turn) and recall exactly what a fresh source reading the database does."""
    topics, sessions = stores
    reads: list[int] = []
    for_subject = topics.for_subject

    async def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        reads.append(1)
        return await for_subject(*args, **kwargs)

    topics.for_subject = counted  # type: ignore[method-assign]
    await archive(topics, GUITAR, group=GROUP, user=ALICE)
    await sessions.append([_summary("用户最近在减肥，晚饭只吃沙拉", NOW - 300)])
    warm = OldTopicsSource(topics, sessions)
    await warm.gather(request("F和弦还是按不响怎么办"))
    assert len(reads) == 1

    await sessions.append([_summary("用户在准备考研，每天早起背单词", NOW - 200)])  # new summary
    salad = await archive(topics, "用户最近在减肥，晚饭只吃沙拉", group=GROUP, user=ALICE)
    live = await sessions.latest_summary(BOT, GROUP, ALICE)
    assert live is not None
    marker = (live.row_id, live.created_at, live.content)
    key = (BOT, GROUP, ALICE, GroupConfig().session.topic_candidates)
    kept = await warm.warm.for_subject(topics, key, marker=marker, now=NOW)
    assert len(reads) == 1  # the archived topic came from the summary hook, not a read
    assert kept == await for_subject(BOT, GROUP, ALICE, limit=key[3])  # what the DB holds
    assert kept[0].row_id == salad
    recalled = await warm.gather(request("减肥晚饭吃沙拉"))  # the summary before is live no more
    assert recalled.blocks[S.MID_TERM].memory_ids == (f"topic:{salad}",)
    assert len(reads) == 1


async def test_a_member_without_topics_costs_no_query_and_a_new_topic_is_seen(stores) -> None:
    topics, sessions = stores
    await archive(topics, GUITAR, group=GROUP, user=ALICE)
    await archive(topics, "用户也在学吉他，F和弦按不响", group=OTHER_GROUP, user=BOB)
    source = OldTopicsSource(topics, sessions)
    assert S.MID_TERM in (await source.gather(request("F和弦怎么按"))).blocks  # group warm
    reads: list[int] = []
    plain_for_subject = topics.for_subject

    async def counted(*args, **kwargs):
        reads.append(1)
        return await plain_for_subject(*args, **kwargs)

    topics.for_subject = counted  # type: ignore[method-assign]
    # Bob has a topic in the other group only: nothing here, and no query to find that out
    assert (await source.gather(request("F和弦怎么按", user=BOB))).blocks == {}
    assert reads == []
    await archive(topics, "用户也在学吉他，F和弦按不响", group=GROUP, user=BOB)
    block = (await source.gather(request("F和弦怎么按", user=BOB))).blocks[S.MID_TERM]
    assert "按不响" in block.text and GUITAR not in block.text
    assert reads == []  # Bob's first topic came from the summary hook, not a read back
