from __future__ import annotations

import random
from typing import Any

import pytest

from pallas.features.worldbook.activation import ActivationResult, activate_worldbook
from pallas.features.worldbook.model import (
    EntryTimer,
    SelectiveLogic,
    WorldbookConfig,
    WorldbookEntry,
    WorldbookPosition,
    WorldbookState,
)


class FixedRng(random.Random):
    """random() returns the given values in turn (last one repeats)."""

    def __init__(self, *values: float) -> None:
        super().__init__(0)
        self._values = list(values)

    def random(self) -> float:
        return self._values.pop(0) if len(self._values) > 1 else self._values[0]


def entry(uid: int, content: str | None = None, **kw: Any) -> WorldbookEntry:
    return WorldbookEntry(book="t", uid=uid, content=content or f"内容{uid}", **kw)


def run(
    entries: list[WorldbookEntry],
    messages: list[str],
    *,
    state: WorldbookState | None = None,
    turn: int = 1,
    rng: random.Random | None = None,
    **config: Any,
) -> ActivationResult:
    chat_length = config.pop("chat_length", None)
    # these tables count timed effects in bot replies (`turn`); the SillyTavern message unit
    # (the default) is covered by test_worldbook_fidelity.py
    config.setdefault("timed_unit", "replies")
    return activate_worldbook(
        entries,
        messages,
        state or WorldbookState(),
        turn,
        rng or random.Random(0),
        WorldbookConfig(**config),
        count_tokens=len,
        chat_length=chat_length,
    )


def ids(result: ActivationResult) -> set[int]:
    return {a.entry.uid for a in result.activated}


# ---------------------------------------------------------------- keys


def test_constant_entry_activates_without_keys() -> None:
    result = run([entry(1, constant=True)], ["随便聊聊"])
    assert ids(result) == {1}
    assert result.activated[0].reason == "constant"


@pytest.mark.parametrize(
    ("key", "message", "extra", "hit"),
    [
        ("Rhodes", "welcome to rhodes island", {}, True),
        ("Rhodes", "welcome to rhodes island", {"case_sensitive": True}, False),
        ("罗德岛", "我在罗德岛上", {}, True),
        ("罗德岛", "我在罗德岛上", {"match_whole_words": True}, True),  # CJK: never whole-word
        ("doc", "the doctor is in", {"match_whole_words": True}, False),
        ("doc", "我是doc啊", {"match_whole_words": True}, True),  # CJK neighbours are boundaries
        ("doc", "the doctor is in", {}, False),  # whole words by default, as SillyTavern
        ("doc", "the doctor is in", {"match_whole_words": False}, True),
        ("/源石(病|技艺)/", "他得了源石病", {}, True),
        ("/源石(病|技艺)/", "源石很贵", {}, False),
        ("/amiya/i", "AMIYA!", {}, True),
        ("/amiya/", "AMIYA!", {}, False),
        ("/(?<name>凯尔希)医生/", "凯尔希医生来了", {}, True),  # JS named group syntax
        ("", "anything", {}, False),
    ],
)
def test_primary_keys(key: str, message: str, extra: dict[str, Any], hit: bool) -> None:
    result = run([entry(1, keys=(key,), **extra)], [message])
    assert (ids(result) == {1}) is hit
    if hit:
        assert result.activated[0].matched_key == key
        assert result.activated[0].matched_in == "messages"


def test_config_case_sensitivity_applies_when_entry_does_not_say() -> None:
    e = entry(1, keys=("Rhodes",))
    assert ids(run([e], ["rhodes"], case_sensitive=True)) == set()
    assert ids(run([e], ["rhodes"])) == {1}


@pytest.mark.parametrize(
    ("logic", "present", "expected"),
    [
        (SelectiveLogic.AND_ANY, 0, False),
        (SelectiveLogic.AND_ANY, 1, True),
        (SelectiveLogic.AND_ANY, 2, True),
        (SelectiveLogic.NOT_ALL, 0, True),
        (SelectiveLogic.NOT_ALL, 1, True),
        (SelectiveLogic.NOT_ALL, 2, False),
        (SelectiveLogic.NOT_ANY, 0, True),
        (SelectiveLogic.NOT_ANY, 1, False),
        (SelectiveLogic.NOT_ANY, 2, False),
        (SelectiveLogic.AND_ALL, 0, False),
        (SelectiveLogic.AND_ALL, 1, False),
        (SelectiveLogic.AND_ALL, 2, True),
    ],
)
def test_selective_logic(logic: SelectiveLogic, present: int, expected: bool) -> None:
    message = "凯尔希" + "".join(["医生", "医疗"][:present])
    e = entry(1, keys=("凯尔希",), secondary_keys=("医生", "医疗"), selective_logic=logic)
    result = run([e], [message])
    assert (ids(result) == {1}) is expected
    if not expected:
        assert result.skip_reason("t.1") == "secondary_logic"
    elif logic in (SelectiveLogic.AND_ANY, SelectiveLogic.AND_ALL):
        assert result.activated[0].matched_secondary == ("医生", "医疗")[:present]


def test_secondary_keys_ignored_when_not_selective() -> None:
    e = entry(1, keys=("凯尔希",), secondary_keys=("医生",), selective=False)
    assert ids(run([e], ["凯尔希"])) == {1}


def test_entry_without_keys_or_content_is_skipped() -> None:
    result = run([entry(1), entry(2, content="  ", keys=("a",))], ["a"])
    assert result.skip_reason("t.1") == "no_keys"
    assert result.skip_reason("t.2") == "empty_content"


# ---------------------------------------------------------------- scan depth


@pytest.mark.parametrize(
    ("config_depth", "entry_depth", "expected"),
    [(2, None, False), (3, None, True), (2, 5, True), (4, 0, False), (0, None, False)],
)
def test_scan_depth(config_depth: int, entry_depth: int | None, expected: bool) -> None:
    messages = ["罗德岛", "第二条", "第三条"]  # the key is 3 messages back
    e = entry(1, keys=("罗德岛",), scan_depth=entry_depth)
    assert (ids(run([e], messages, scan_depth=config_depth)) == {1}) is expected


def test_keys_do_not_span_message_boundaries() -> None:
    assert ids(run([entry(1, keys=("罗德岛",))], ["罗德", "岛"])) == set()


# ---------------------------------------------------------------- probability


@pytest.mark.parametrize(
    ("roll", "probability", "expected"),
    [(0.3, 50, True), (0.7, 50, False), (0.0, 0, False), (0.999, 100, True)],
)
def test_probability(roll: float, probability: float, expected: bool) -> None:
    e = entry(1, keys=("a",), probability=probability)
    result = run([e], ["a"], rng=FixedRng(roll))
    assert (ids(result) == {1}) is expected
    if not expected:
        assert result.skip_reason("t.1") == "probability"


def test_probability_with_seeded_rng_is_reproducible_and_roughly_fair() -> None:
    e = entry(1, keys=("a",), probability=30)
    outcomes = [bool(ids(run([e], ["a"], rng=random.Random(seed)))) for seed in range(400)]
    again = [bool(ids(run([e], ["a"], rng=random.Random(seed)))) for seed in range(400)]
    assert outcomes == again
    assert 0.2 < sum(outcomes) / len(outcomes) < 0.4


def test_use_probability_false_never_rolls() -> None:
    e = entry(1, keys=("a",), probability=0, use_probability=False)
    result = run([e], ["a"], rng=FixedRng(0.99))
    assert ids(result) == {1} and result.trace.rolls == ()


# ---------------------------------------------------------------- timed effects


def step_turns(e: WorldbookEntry, messages_by_turn: list[str]) -> list[tuple[bool, str | None]]:
    """Run consecutive turns, persisting state through its dict form; (active, skip reason)."""
    state = WorldbookState()
    out = []
    for turn, message in enumerate(messages_by_turn, start=1):
        result = run([e], [message], state=state, turn=turn)
        state = WorldbookState.from_dict(result.state.to_dict())
        active = bool(result.activated)
        reason = result.activated[0].reason if active else result.skip_reason(e.key_id)
        out.append((active, reason))
    return out


def test_sticky_then_cooldown_across_turns() -> None:
    e = entry(1, keys=("凯尔希",), sticky=2, cooldown=1)
    turns = step_turns(e, ["凯尔希", "无关", "无关", "凯尔希", "凯尔希"])
    assert turns == [
        (True, "key"),
        (True, "sticky"),
        (True, "sticky"),
        (False, "cooldown"),  # effect ended after turn 3; one turn of cooldown
        (True, "key"),
    ]


def test_cooldown_without_sticky() -> None:
    e = entry(1, keys=("a",), cooldown=2)
    turns = step_turns(e, ["a", "a", "a", "a"])
    assert [t[1] for t in turns] == ["key", "cooldown", "cooldown", "key"]


def test_constant_with_cooldown_alternates() -> None:
    e = entry(1, constant=True, cooldown=1)
    assert [t[0] for t in step_turns(e, ["x"] * 4)] == [True, False, True, False]


@pytest.mark.parametrize(("chat_length", "expected"), [(3, False), (5, True), (9, True)])
def test_delay_until_chat_has_enough_messages(chat_length: int, expected: bool) -> None:
    e = entry(1, keys=("a",), delay=5)
    result = run([e], ["a"], chat_length=chat_length)
    assert (ids(result) == {1}) is expected
    if not expected:
        assert result.skip_reason("t.1") == "delay"


def test_state_is_pruned_and_stale_timers_ignored() -> None:
    e = entry(1, keys=("a",), sticky=1)
    first = run([e], ["a"], turn=10)
    assert first.state.to_dict() == {
        "t.1": {"activated_at": 10, "sticky_until": 11, "cooldown_until": None}
    }
    later = run([e], ["x"], state=first.state, turn=12)
    assert later.state.timers == {} and not later.activated
    # A counter that went backwards (e.g. reset) must not leave the entry stuck.
    stale = WorldbookState({"t.1": EntryTimer(activated_at=50, cooldown_until=60)})
    assert ids(run([e], ["a"], state=stale, turn=3)) == {1}
    assert WorldbookState.from_dict({"t.1": {"bad": 1}, "t.2": None}).timers == {}


# ---------------------------------------------------------------- recursion


CHAIN = [
    entry(1, "罗德岛的医疗负责人是凯尔希", keys=("罗德岛",)),
    entry(2, "凯尔希常和阿米娅在一起", keys=("凯尔希",)),
    entry(3, "阿米娅喜欢博士", keys=("阿米娅",)),
    entry(4, "博士失忆了", keys=("博士",)),
]


def test_recursion_activates_entries_mentioned_in_activated_content() -> None:
    result = run(CHAIN[:2], ["我在罗德岛上"])
    assert ids(result) == {1, 2}
    second = next(a for a in result.activated if a.entry.uid == 2)
    assert second.step == 1 and second.matched_in == "recursion"


def test_recursion_disabled() -> None:
    result = run(CHAIN[:2], ["我在罗德岛上"], recursion=False)
    assert ids(result) == {1}


def test_recursion_step_limit() -> None:
    result = run(CHAIN, ["我在罗德岛上"], max_recursion_steps=2)
    assert ids(result) == {1, 2, 3}
    assert result.trace.step_limit_reached
    assert result.skip_reason("t.4") == "no_primary_match"
    assert ids(run(CHAIN, ["我在罗德岛上"], max_recursion_steps=3)) == {1, 2, 3, 4}


def test_exclude_recursion_blocks_activation_by_recursion_only() -> None:
    excluded = entry(2, "…", keys=("凯尔希",), exclude_recursion=True)
    result = run([CHAIN[0], excluded], ["我在罗德岛上"])
    assert ids(result) == {1}
    assert result.skip_reason("t.2") == "exclude_recursion"
    assert ids(run([CHAIN[0], excluded], ["凯尔希在罗德岛上"])) == {1, 2}


def test_prevent_recursion_content_triggers_nothing() -> None:
    quiet = entry(1, "罗德岛的医疗负责人是凯尔希", keys=("罗德岛",), prevent_recursion=True)
    result = run([quiet, CHAIN[1]], ["我在罗德岛上"])
    assert ids(result) == {1}


def test_delay_until_recursion() -> None:
    late = entry(5, keys=("罗德岛",), delay_until_recursion=1)
    result = run([CHAIN[0], late], ["我在罗德岛上"])
    assert ids(result) == {1, 5}
    assert next(a for a in result.activated if a.entry.uid == 5).step == 1
    # Without a recursion pass (nothing else activated, or recursion off) it never activates.
    alone = run([late], ["我在罗德岛上"])
    assert alone.activated == () and alone.skip_reason("t.5") == "delay_until_recursion"
    no_rec = run([CHAIN[0], late], ["我在罗德岛上"], recursion=False)
    assert ids(no_rec) == {1} and no_rec.skip_reason("t.5") == "delay_until_recursion"


def test_delay_until_recursion_levels() -> None:
    level1 = entry(5, keys=("罗德岛",), delay_until_recursion=1)
    level2 = entry(6, keys=("罗德岛",), delay_until_recursion=2)
    result = run([CHAIN[0], level1, level2], ["我在罗德岛上"])
    steps = {a.entry.uid: a.step for a in result.activated}
    # Level 2 opens only once level 1 is exhausted (pass 2 found nothing new).
    assert steps == {1: 0, 5: 1, 6: 3}


# ---------------------------------------------------------------- inclusion groups


def group_entries(**overrides: dict[str, Any]) -> list[WorldbookEntry]:
    base = {
        1: {"keys": ("猫",), "groups": ("pet",), "order": 10},
        2: {"keys": ("猫", "橘"), "groups": ("pet",), "order": 20},
        3: {"keys": ("猫",), "groups": ("pet",), "order": 30},
    }
    return [
        entry(uid, **{**fields, **overrides.get(f"e{uid}", {})}) for uid, fields in base.items()
    ]


def test_group_override_wins() -> None:
    entries = group_entries(e1={"group_override": True})
    result = run(entries, ["橘猫"])
    assert ids(result) == {1}
    assert result.skip_reason("t.2") == result.skip_reason("t.3") == "group_lost"
    assert result.trace.group_decisions == (("pet", "t.1", "override"),)


def test_group_scoring_prefers_most_key_matches() -> None:
    result = run(group_entries(), ["橘猫"], use_group_scoring=True)
    assert ids(result) == {2}
    # Per entry: only entries that opt in can lose on score.
    per_entry = group_entries(e1={"use_group_scoring": True}, e3={"use_group_scoring": True})
    assert ids(run(per_entry, ["橘猫"])) == {2}


@pytest.mark.parametrize(("roll", "winner"), [(0.05, 3), (0.5, 2), (0.95, 1)])
def test_group_weighted_random(roll: float, winner: int) -> None:
    # Priority order is 3 (order 30), 2, 1; weights 100, 200, 100 → cumulative 100/300/400.
    entries = group_entries(e2={"group_weight": 200.0})
    result = run(entries, ["猫"], rng=FixedRng(roll))
    assert ids(result) == {winner}


def test_group_weights_with_seeded_rng_favour_heavy_entry() -> None:
    entries = group_entries(
        e1={"group_weight": 1000.0}, e2={"group_weight": 1.0}, e3={"group_weight": 1.0}
    )
    wins = [ids(run(entries, ["猫"], rng=random.Random(s))) == {1} for s in range(200)]
    assert sum(wins) > 180


def test_group_admits_one_entry_per_turn_even_across_recursion() -> None:
    first = entry(1, "它是一只猫", keys=("宠物",), groups=("pet",))
    second = entry(2, keys=("猫",), groups=("pet",))
    result = run([first, second], ["说说宠物"])
    assert ids(result) == {1}
    assert result.skip_reason("t.2") == "group_already_active"


def test_sticky_member_holds_its_group() -> None:
    entries = group_entries(e1={"sticky": 3})
    turn1 = run(entries, ["猫"], rng=FixedRng(0.99))  # roll picks entry 1
    assert ids(turn1) == {1}
    turn2 = run(entries, ["猫"], state=turn1.state, turn=2, rng=FixedRng(0.0))
    assert ids(turn2) == {1}
    assert turn2.activated[0].reason == "sticky"


def test_entry_in_several_groups() -> None:
    a = entry(1, keys=("猫",), groups=("pet", "orange"), group_override=True)
    b = entry(2, keys=("猫",), groups=("orange",))
    c = entry(3, keys=("猫",), groups=("pet",))
    assert ids(run([a, b, c], ["猫"])) == {1}


# ---------------------------------------------------------------- budget, order, positions


def test_budget_cut_follows_order() -> None:
    entries = [entry(uid, "字" * 40, keys=("a",), order=uid * 10) for uid in (1, 2, 3)]
    result = run(entries, ["a"], budget_share=1.0, budget_cap_tokens=100)
    assert ids(result) == {3, 2}  # highest order first until the budget runs out
    assert result.skip_reason("t.1") == "budget"
    assert result.trace.budget_exhausted and result.trace.used_tokens == 80
    assert result.trace.budget_tokens == 100


def test_budget_exhaustion_stops_recursion() -> None:
    big = entry(1, "凯尔希" + "字" * 90, keys=("罗德岛",), order=100)
    filler = entry(3, "字" * 20, keys=("罗德岛",), order=0)
    result = run([big, filler, CHAIN[1]], ["罗德岛"], budget_share=1.0, budget_cap_tokens=100)
    assert ids(result) == {1} and result.trace.passes == 1
    assert result.skip_reason("t.3") == "budget"
    assert result.skip_reason("t.2") == "no_primary_match"  # no recursion pass ran


def test_budget_share_of_context() -> None:
    assert WorldbookConfig(budget_share=0.25, budget_cap_tokens=0).budget_tokens(4000) == 1000
    assert WorldbookConfig(budget_share=0.25, budget_cap_tokens=300).budget_tokens(4000) == 300


def test_render_order_and_positions() -> None:
    entries = [
        entry(1, keys=("a",), order=50, position=WorldbookPosition.BEFORE_PERSONA),
        entry(2, keys=("a",), order=10, position=WorldbookPosition.AFTER_PERSONA),
        entry(3, keys=("a",), order=30, position=WorldbookPosition.AT_DEPTH, depth=2),
    ]
    result = run(entries, ["a"])
    assert [a.entry.uid for a in result.activated] == [2, 3, 1]
    assert [a.entry.uid for a in result.at(WorldbookPosition.AT_DEPTH)] == [3]
    assert result.at(WorldbookPosition.AT_DEPTH)[0].entry.depth == 2
    snapshot = result.to_dict()
    assert snapshot["activated"][0]["source"] == "worldbook:t#2"
    assert snapshot["budget"] == [9, 1000]  # three 3-char contents


def test_disabled_entries_and_disabled_worldbook() -> None:
    e = entry(1, keys=("a",), enabled=False)
    assert run([e], ["a"]).skip_reason("t.1") == "disabled"
    off = run([entry(2, constant=True)], ["a"], enabled=False)
    assert off.activated == () and off.trace.passes == 0


def test_duplicate_key_ids_keep_first() -> None:
    result = run([entry(1, "first", keys=("a",)), entry(1, "second", keys=("a",))], ["a"])
    assert [a.entry.content for a in result.activated] == ["first"]
