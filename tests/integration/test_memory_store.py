"""The memory repository on a migrated database (each backend): dedupe, replacement, isolation,
forgetting."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace

import pytest

from pallas.core.db import migrate
from pallas.core.db.engine import create_engine, session_factory
from pallas.features.memory.isolation import group_scope, pool_scope, readable_scopes
from pallas.features.memory.records import NewMemory
from pallas.features.memory.repository import MemoryRepository

BOT = 1
A, B = 100, 200
ALICE, BOB = 11, 22
NOW = 1_760_000_000.0


@pytest.fixture
async def repo(database_url: str) -> AsyncIterator[MemoryRepository]:
    await migrate.upgrade(database_url)
    engine = create_engine(database_url)
    yield MemoryRepository(session_factory(engine))
    await engine.dispose()


def new(
    text: str,
    *,
    scope: str = group_scope(BOT, A),
    kind: str = "person_facts",
    key: str | None = None,
    subject: int | None = ALICE,
    now: float = NOW,
) -> NewMemory:
    return NewMemory(
        bot_id=BOT,
        scope=scope,
        kind=kind,
        key=key or f"t_{text}",
        fingerprint=text.lower(),
        text=text,
        origin="extract",
        now=now,
        subject_user_id=subject,
        source={"message_ids": [len(text)]},
    )


async def test_same_text_is_a_duplicate_and_merges_sources(repo: MemoryRepository) -> None:
    first = await repo.upsert(new("养了一只橘猫", key="pet"))
    again = await repo.upsert(replace(new("养了一只橘猫", key="pet"), source={"message_ids": [99]}))
    assert (first.action, again.action) == ("added", "duplicate")
    assert again.item.id == first.item.id
    assert again.item.source["message_ids"] == [6, 99]
    assert len(await repo.candidates([group_scope(BOT, A)], "person_facts")) == 1


async def test_a_change_in_place_moves_the_revision_and_a_use_does_not(
    repo: MemoryRepository,
) -> None:
    """The rows kept beside a vector index are re-read when their revision moved: every
    change of a live row in place (a duplicate's sources, an expansion) moves it; a use
    (`touch`) and a new row beside it do not, so a busy index re-reads nothing."""
    scope = group_scope(BOT, A)
    first = await repo.upsert(new("养了一只橘猫", key="pet"))
    assert first.item.revision == 0
    await repo.upsert(new("喜欢喝奶茶", key="drink"))
    await repo.touch([first.item.id], NOW + 1)
    assert (await repo.live_revisions(scope, "person_facts"))[first.item.id] == 0
    again = await repo.upsert(replace(new("养了一只橘猫", key="pet"), source={"message_ids": [9]}))
    assert again.action == "duplicate" and again.item.revision == 1
    assert await repo.set_expansion(first.item.id, {"keywords": ["宠物"]})
    revisions = await repo.live_revisions(scope, "person_facts")
    assert revisions[first.item.id] == 2 and sorted(revisions.values()) == [0, 2]
    assert await repo.vector_rows([first.item.id], model="enc@1") == []  # no vector of it yet
    await repo.set_embedding(first.item.id, [0.6, 0.8], "enc@1")
    [(item, blob)] = await repo.vector_rows([first.item.id], model="enc@1")
    assert item.revision == 2 and item.source["expansion"] == {"keywords": ["宠物"]}
    assert len(blob) == 8  # two float32 values, as the index decodes them


async def test_newer_fact_with_the_same_key_replaces_the_older(repo: MemoryRepository) -> None:
    old = await repo.upsert(new("最喜欢的动物是狗", key="favorite_animal"))
    other_person = await repo.upsert(new("最喜欢的动物是鸟", key="favorite_animal", subject=BOB))
    newer = await repo.upsert(new("最喜欢的动物是猫", key="favorite_animal", now=NOW + 60))
    assert newer.action == "replaced" and newer.replaced_ids == (old.item.id,)
    live = await repo.candidates([group_scope(BOT, A)], "person_facts", subject_user_id=ALICE)
    assert [i.text for i in live] == ["最喜欢的动物是猫"]
    gone = await repo.get(old.item.id)
    assert gone is not None and gone.delete_reason == "replaced"
    assert gone.replaced_by == newer.item.id
    bobs = await repo.candidates([group_scope(BOT, A)], "person_facts", subject_user_id=BOB)
    assert [i.id for i in bobs] == [other_person.item.id], "another person's fact is untouched"


async def test_group_b_never_reads_group_a_rows(repo: MemoryRepository) -> None:
    await repo.upsert(new("A 群的秘密", kind="group_memory", subject=None))
    await repo.upsert(
        new("B 群的日常", kind="group_memory", subject=None, scope=group_scope(BOT, B))
    )
    await repo.upsert(new("别的 bot 记的 A 群", kind="group_memory", subject=None,
                          scope=group_scope(BOT + 1, A)))  # fmt: skip
    seen_by_b = await repo.candidates(readable_scopes(BOT, B), "group_memory")
    assert [i.text for i in seen_by_b] == ["B 群的日常"]
    seen_by_a = await repo.candidates(readable_scopes(BOT, A), "group_memory")
    assert [i.text for i in seen_by_a] == ["A 群的秘密"]


async def test_shared_pool_is_read_only_by_groups_that_opt_in(repo: MemoryRepository) -> None:
    await repo.upsert(new("源石是一种矿物", kind="ip_knowledge", subject=None,
                          scope=pool_scope("arknights")))  # fmt: skip
    opted_in = await repo.candidates(readable_scopes(BOT, A, ["arknights"]), "ip_knowledge")
    not_opted = await repo.candidates(readable_scopes(BOT, B), "ip_knowledge")
    other_pool = await repo.candidates(readable_scopes(BOT, B, ["genshin"]), "ip_knowledge")
    assert [i.text for i in opted_in] == ["源石是一种矿物"]
    assert not_opted == [] and other_pool == []


async def test_forget_subject_only_in_the_given_scope_and_kinds(repo: MemoryRepository) -> None:
    in_a = await repo.upsert(new("喜欢猫"))
    note = await repo.upsert(new("叫帕拉斯小羊", kind="relationship"))
    in_b = await repo.upsert(new("喜欢猫", scope=group_scope(BOT, B)))
    bob = await repo.upsert(new("喜欢狗", subject=BOB))
    group_row = await repo.upsert(new("周五开黑", kind="group_memory", subject=None))
    gone = await repo.forget_subject(
        ALICE, now=NOW, kinds=("person_facts", "relationship", "teachings"),
        scopes=[group_scope(BOT, A)],
    )  # fmt: skip
    assert {i.id for i in gone} == {in_a.item.id, note.item.id}
    assert all(i.delete_reason == "forget_me" for i in gone)
    live = {i.id for i in await repo.list_items(scopes=None)}
    assert live == {in_b.item.id, bob.item.id, group_row.item.id}


async def test_touch_counts_uses_and_soft_delete_hides(repo: MemoryRepository) -> None:
    first = await repo.upsert(new("喜欢猫"))
    second = await repo.upsert(new("在学吉他"))
    assert await repo.touch([first.item.id, first.item.id], NOW + 100) == 1
    await repo.touch([first.item.id], NOW + 200)
    got = await repo.get(first.item.id)
    assert got is not None and (got.access_count, got.last_access_at) == (2, NOW + 200)
    # most recently used first
    order = await repo.candidates([group_scope(BOT, A)], "person_facts")
    assert [i.id for i in order] == [first.item.id, second.item.id]
    # a delete outside the allowed scopes does nothing
    assert await repo.soft_delete([first.item.id], now=NOW, reason="x", scopes=["pool:x"]) == []
    await repo.soft_delete([first.item.id], now=NOW, reason="admin")
    assert [i.id for i in await repo.candidates([group_scope(BOT, A)], "person_facts")] == [
        second.item.id
    ]
    deleted = await repo.list_items(scopes=None, include_deleted=True)
    assert {i.id for i in deleted} == {first.item.id, second.item.id}


async def test_candidate_cap_keeps_the_most_recently_used(repo: MemoryRepository) -> None:
    ids = [(await repo.upsert(new(f"事实{i}", now=NOW + i))).item.id for i in range(10)]
    capped = await repo.candidates([group_scope(BOT, A)], "person_facts", limit=3)
    assert [i.id for i in capped] == ids[::-1][:3]


async def test_candidate_reads_give_the_rows_as_the_orm_reads_them(repo: MemoryRepository) -> None:
    """`candidates` / `candidates_by_kind` read Core rows by position (the reply path's cold
    loads); every field must come out as the ORM read (`get_many`) gives it."""
    group = group_scope(BOT, A)
    plain = (await repo.upsert(new("喜欢猫"))).item
    rich = await repo.upsert(replace(new("住在上海", key="city"), source={"a": [1, {"b": "x"}]}))
    named = await repo.upsert(
        NewMemory(
            bot_id=BOT,
            scope=group,
            kind="group_memory",
            key="event",
            fingerprint="周末聚餐",
            text="周末聚餐",
            origin="teach",
            now=NOW + 5,
            subject_user_id=None,
            author_user_id=BOB,
            subject_name="",
            source={},
        )
    )
    await repo.upsert(replace(new("喜欢猫"), now=NOW + 30))  # a duplicate: updated_at moves
    await repo.set_embedding(rich.item.id, [0.25, -1.5, 3.0])
    await repo.touch([plain.id, named.item.id], NOW + 60)
    await repo.touch([plain.id], NOW + 90)
    ids = [plain.id, rich.item.id, named.item.id]
    by_orm = {i.id: i for i in await repo.get_many(ids)}
    personal = await repo.candidates([group], "person_facts", subject_user_id=ALICE)
    shared = await repo.candidates_by_kind([group], ["group_memory", "knowledge"])
    assert [i.id for i in personal] == [plain.id, rich.item.id]  # most recently used first
    assert shared == {"group_memory": [by_orm[named.item.id]], "knowledge": []}
    for item in personal:
        assert item == by_orm[item.id]
    assert await repo.vectors([rich.item.id]) == [(rich.item.id, ALICE, [0.25, -1.5, 3.0])]
    assert by_orm[rich.item.id].source == {"a": [1, {"b": "x"}]}
    assert by_orm[plain.id].access_count == 2 and by_orm[named.item.id].access_count == 1
    assert (by_orm[plain.id].created_at, by_orm[plain.id].updated_at) == (NOW, NOW + 30)
