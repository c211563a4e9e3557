from __future__ import annotations

import pytest

from pallas.features.memory.isolation import (
    InvalidPoolName,
    can_read,
    filter_readable,
    group_scope,
    own_scope,
    pool_scope,
    private_fact_scopes,
    private_scope,
    readable_scopes,
)
from pallas.ranking.scoring import MemoryCandidate, retrieve

BOT = 10
GROUP_A = 111
GROUP_B = 222
NOW = 1_760_000_000.0


def memory(cid: str, scope: str, text: str = "小明喜欢吃草莓蛋糕") -> MemoryCandidate:
    return MemoryCandidate(cid, text, scope, "group_memory", created_at=NOW - 86_400)


def test_group_reads_only_its_own_scope_by_default() -> None:
    scopes = readable_scopes(BOT, GROUP_A)
    assert scopes == {group_scope(BOT, GROUP_A)}
    assert not can_read(group_scope(BOT, GROUP_B), scopes)
    assert not can_read(group_scope(BOT + 1, GROUP_A), scopes), "another bot's memory of A"


def test_group_b_cannot_see_group_a_items() -> None:
    items = [
        memory("a1", group_scope(BOT, GROUP_A)),
        memory("a2", group_scope(BOT, GROUP_A), "小明讨厌下雨天"),
        memory("b1", group_scope(BOT, GROUP_B), "小红喜欢猫"),
    ]
    scopes_b = readable_scopes(BOT, GROUP_B)
    assert [m.id for m in filter_readable(items, scopes_b)] == ["b1"]
    result = retrieve(
        "小明喜欢吃什么", items, kind="group_memory", now=NOW, allowed_scopes=scopes_b
    )
    assert not {"a1", "a2"} & set(result.ids)
    assert not {"a1", "a2"} & {c.id for c in result.trace.candidates}
    assert set(result.trace.dropped_by_scope) == {"a1", "a2"}
    # ... while group A gets its fact for the same question.
    result_a = retrieve(
        "小明喜欢吃什么", items, kind="group_memory", now=NOW,
        allowed_scopes=readable_scopes(BOT, GROUP_A),
    )  # fmt: skip
    assert result_a.ids[0] == "a1"


def test_shared_pool_is_opt_in_per_group() -> None:
    lore = memory("lore", pool_scope("arknights"), "罗德岛是一家制药公司")
    with_pool = readable_scopes(BOT, GROUP_A, ["arknights"])
    without = readable_scopes(BOT, GROUP_B)
    assert [m.id for m in filter_readable([lore], with_pool)] == ["lore"]
    assert filter_readable([lore], without) == []
    assert group_scope(BOT, GROUP_B) not in with_pool


@pytest.mark.parametrize("bad", ["", "group:10:222", "a:b", "../x", "has space", "x" * 65, "池子"])
def test_pool_names_cannot_name_another_scope(bad: str) -> None:
    with pytest.raises(InvalidPoolName):
        readable_scopes(BOT, GROUP_A, [bad])


def test_private_chat_scope_is_per_user() -> None:
    assert own_scope(BOT, 0, 42) == private_scope(BOT, 42)
    assert readable_scopes(BOT, 0, user_id=42) == {private_scope(BOT, 42)}
    assert private_scope(BOT, 43) not in readable_scopes(BOT, 0, user_id=42)
    with pytest.raises(ValueError):
        own_scope(BOT, 0)
    with pytest.raises(ValueError):
        group_scope(BOT, 0)


OTHER_BOT = 11
USER = 5


@pytest.mark.parametrize(
    ("fact_scopes", "use_group_facts", "expected"),
    [
        # nothing taught in groups: the private chat only
        ((), True, {private_scope(BOT, USER)}),
        # the user's own facts from the bot's groups come along…
        (
            (group_scope(BOT, GROUP_A), group_scope(BOT, GROUP_B)),
            True,
            {private_scope(BOT, USER), group_scope(BOT, GROUP_A), group_scope(BOT, GROUP_B)},
        ),
        # …unless the operator says no
        ((group_scope(BOT, GROUP_A),), False, {private_scope(BOT, USER)}),
        # never another bot's group, a pool, or another private chat
        (
            (
                group_scope(OTHER_BOT, GROUP_A),
                pool_scope("shared"),
                private_scope(BOT, 6),
                private_scope(OTHER_BOT, USER),
            ),
            True,
            {private_scope(BOT, USER)},
        ),
    ],
)
def test_a_private_chat_reads_its_own_scope_and_the_users_group_facts(
    fact_scopes, use_group_facts, expected
) -> None:
    scopes = private_fact_scopes(BOT, USER, fact_scopes, use_group_facts=use_group_facts)
    assert scopes == expected
