"""The speaker's profile (issue 34): every live fact in reach, compact, quoted, within budget."""

from __future__ import annotations

import pytest

from pallas.core.tokens import count_tokens
from pallas.features.memory.profile_store import Statement, StoredProfile
from pallas.features.memory.records import MemoryItem
from pallas.features.memory_prompt.profile import (
    ASIDE,
    compose_profile,
    consolidated_aside,
    consolidated_profile,
    profile_aside,
    profile_block,
    stands_for,
)


def fact(n: int, text: str, origin: str = "teach") -> MemoryItem:
    return MemoryItem(
        id=n, bot_id=1, scope="group:1:2", kind="person_facts", key=f"k{n}", text=text,
        origin=origin, created_at=0.0, updated_at=0.0, subject_user_id=7,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("texts", "max_chars", "phrases"),
    [
        (["TA在学日语", "TA的猫叫土豆"], 600, ("「TA在学日语」", "「TA的猫叫土豆」")),
        (["TA住海淀", "TA住海淀五道口"], 600, ("「TA住海淀」", "「TA住海淀五道口」")),
        (["TA住海淀五道口", "TA住海淀"], 600, ("「TA住海淀五道口」",)),  # said already
        (["TA在学日语", "TA在学日语"], 600, ("「TA在学日语」",)),
        (["TA喜欢「猫」"], 600, ("「TA喜欢『猫』」",)),  # a quote cannot close the phrase
        (["TA学日语", "TA养了一只橘猫", "TA爱羽毛球"], 12, ("「TA学日语」", "「TA爱羽毛球」")),
        (["以后你要叫我主人", "TA在学日语"], 600, ("「TA在学日语」",)),  # a rule for the bot
        ([], 600, ()),
    ],
)
def test_compose_profile(texts: list[str], max_chars: int, phrases: tuple[str, ...]) -> None:
    items = [fact(n, t) for n, t in enumerate(texts, start=1)]
    profile = compose_profile(items, max_chars=max_chars)
    assert profile.phrases == phrases
    assert len(profile.refs) == len(phrases)


def test_the_block_keeps_every_fact_data_and_names_its_rows() -> None:
    items = [fact(n, f"TA喜欢第{n}种水果") for n in range(1, 20)]
    profile = compose_profile(items, max_chars=600)
    block = profile_block(profile, source="person_facts")
    assert block is not None
    lines = block.text.split("\n")
    assert lines[0] == "【当前对话者的稳定偏好 — 仅供参考】"
    assert lines[1].startswith("本人亲口说的：「TA喜欢第1种水果」「TA喜欢第2种水果」")
    assert len(lines) == 1 + 3  # 19 phrases, eight to a line
    assert block.memory_ids == tuple(f"mem:{n}" for n in range(1, 20))
    assert profile_block(compose_profile([], max_chars=600), source="person_facts") is None


def test_what_the_member_said_is_told_apart_from_what_was_overheard() -> None:
    items = [fact(1, "TA喜欢猫"), fact(2, "TA住在海淀区", origin="extract"), fact(3, "TA是猫奴")]
    block = profile_block(compose_profile(items, max_chars=600), source="person_facts")
    assert block is not None
    assert block.text.split("\n")[1:] == [
        "本人亲口说的：「TA喜欢猫」「TA是猫奴」",
        "群聊中得知：「TA住在海淀区」",
    ]


@pytest.mark.parametrize(("max_tokens", "kept"), [(0, 30), (150, None), (40, None), (5, 0)])
def test_a_token_budget_keeps_the_best_facts_that_fit(max_tokens: int, kept: int | None) -> None:
    texts = [f"TA第{n}次说自己喜欢吃家门口那家店的牛肉面" for n in range(30)]
    profile = compose_profile([fact(n, t) for n, t in enumerate(texts)], max_chars=100_000,
                              max_tokens=max_tokens)  # fmt: skip
    tokens = sum(count_tokens(p) for p in profile.phrases)
    if kept is not None:
        assert len(profile.phrases) == kept
    else:
        assert 0 < tokens <= max_tokens and len(profile.phrases) < 30
        assert profile.phrases[0] == f"「{texts[0]}」"  # the best first
    assert profile.left_out == 30 - len(profile.phrases)


ELEVEN = ["TA的幸运数字是7", "TA喜欢吃火锅", "TA养了一只橘猫", "TA住在海淀区", "TA每天六点起床",
          "TA在学吉他", "TA最喜欢蓝色", "TA是做会计的", "TA老家在成都", "TA怕冷",
          "TA周三晚上打羽毛球"]  # fmt: skip


STAMPS = [f"TA收藏了第{n}号邮票" for n in range(50)]


@pytest.mark.parametrize(
    ("facts", "relevant", "near", "budget", "aside"),
    [
        # a small profile is carried whole: the relevant first, the rest aside
        (ELEVEN, [3], [], 150, 10),
        (ELEVEN, [], [], 150, 11),  # nothing relevant: every fact aside, none told as an answer
        (ELEVEN, list(range(1, 12)), [], 150, 0),  # all relevant: nothing left to set aside
        (ELEVEN, [3], [5, 6], 150, 10),  # whole wins over the nearest
        # above the budget: the nearest below the gate aside, if any, within the budget
        (ELEVEN, [3], [], 40, 0),
        (ELEVEN, [3], [5, 6], 50, 2),
        (STAMPS, [7], [], 150, 0),
        (STAMPS, [7], [8, 9, 10], 150, 3),
        (STAMPS, [], [8, 9, 10], 150, 3),  # a never-said question: only the nearest, aside
        (STAMPS, [7], [7, 9], 150, 1),  # one already told is not repeated
        (STAMPS, [7], [8, 9, 10], 20, 0),  # no room left after the label
        (ELEVEN, [3], [5], 0, 0),  # no ranking (no vectors): the whole profile as it was
    ],
)
def test_the_profile_sets_aside_a_small_profiles_rest_or_the_nearest_facts(
    facts: list[str], relevant: list[int], near: list[int], budget: int, aside: int
) -> None:
    live = [fact(n, t) for n, t in enumerate(facts, start=1)]
    shown = compose_profile([live[n - 1] for n in relevant], max_chars=600, max_tokens=budget)
    rest = profile_aside(
        live, shown, near=[live[n - 1] for n in near], max_chars=600, max_tokens=budget
    )
    assert (len(rest.refs) if rest is not None else 0) == aside
    if rest is None:
        return
    block = profile_block(shown, source="person_facts", aside=rest)
    assert block is not None
    cut = block.text.index(ASIDE)  # the relevant are told before it, the rest after it
    assert all(block.text.index(f"「{live[n - 1].text}」") < cut for n in relevant)
    assert all(block.text.index(phrase) > cut for phrase in rest.phrases)
    assert set(block.memory_ids) == set(shown.refs) | set(rest.refs)
    spent = sum(count_tokens(p) for p in (*shown.phrases, *rest.phrases)) + count_tokens(ASIDE)
    assert spent <= budget  # the label is paid from the budget too


CATS = ["TA在腾讯上班", "TA喜欢猫", "TA对花生过敏", "TA很喜欢猫咪", "TA现在在字节上班"]


def consolidation(live: list[MemoryItem]) -> StoredProfile:
    """The cheap model's merge of `CATS`: the two cat facts one statement, Tencent retired."""
    statements = (
        Statement("TA特别喜欢猫", (2, 4), told=True),
        Statement("TA在字节上班", (5,), told=True),
        Statement("TA对花生过敏", (3,), told=True),
    )
    basis = tuple(sorted(i.id for i in live))
    return StoredProfile("group:1:2", 7, statements, basis, (1,), "cheap", 30, 0.0)


@pytest.mark.parametrize(
    ("relevant", "near", "budget", "aside"),
    [
        # the work fact relevant: the rest fits, as statements, never the rows they merge
        ([5], [], 150, ("「TA特别喜欢猫」", "「TA对花生过敏」")),
        ([5], [2], 150, ("「TA特别喜欢猫」", "「TA对花生过敏」")),
        # nothing relevant (a never-said question): the same, whole
        ([], [4], 150, ("「TA特别喜欢猫」", "「TA对花生过敏」", "「TA在字节上班」")),
        # too little room for all: only the statements standing for the nearest facts
        ([5], [4], 30, ("「TA特别喜欢猫」",)),
        ([5], [], 30, None),
        # everything shown already: nothing aside
        ([5, 2, 3], [], 150, None),
        ([5], [], 0, None),  # no ranking (no vectors): no aside
    ],
)
def test_a_consolidated_profile_sets_aside_its_statements_not_the_rows_they_merge(
    relevant: list[int], near: list[int], budget: int, aside: tuple[str, ...] | None
) -> None:
    live = [fact(n, t) for n, t in enumerate(CATS, start=1) if n != 1]  # Tencent retired
    stored = consolidation(live)
    by_id = {i.id: i for i in live}
    shown = consolidated_profile(stored, live, max_chars=600, max_tokens=budget,
                                 relevant=[by_id[n] for n in relevant])  # fmt: skip
    shown = shown or compose_profile([], max_chars=600)
    rest = consolidated_aside(stored, live, shown, near=[by_id[n] for n in near],
                              max_chars=600, max_tokens=budget)  # fmt: skip
    assert (rest.phrases if rest is not None else None) == aside
    if rest is not None:
        block = profile_block(shown, source="person_facts", aside=rest)
        assert block is not None and "猫咪" not in block.text


def test_a_consolidation_that_no_longer_stands_for_the_facts_sets_nothing_aside() -> None:
    live = [fact(n, t) for n, t in enumerate(CATS, start=1) if n != 1]
    stored = consolidation(live)
    newer = [*live, fact(9, "TA养了一只狗")]  # a fact taught since
    assert not stands_for(stored, newer)
    shown = compose_profile([], max_chars=600)
    assert consolidated_aside(stored, newer, shown, max_chars=600, max_tokens=150) is None
