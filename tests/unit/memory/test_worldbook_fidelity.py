"""SillyTavern fidelity: timed effects in chat messages, per-book limits, whole-word keys."""

from __future__ import annotations

import random

import pytest

from pallas.features.worldbook.activation import activate_worldbook
from pallas.features.worldbook.model import WorldbookConfig, WorldbookEntry, WorldbookState


def entry(uid: int, content: str = "", book: str = "a", **kw) -> WorldbookEntry:
    return WorldbookEntry(book=book, uid=uid, content=content or f"内容{uid}", **kw)


def run(entries, messages, *, state=None, turn=1, message_index=None, **config):
    return activate_worldbook(
        entries,
        messages,
        state or WorldbookState(),
        turn,
        random.Random(0),
        WorldbookConfig(**config),
        count_tokens=len,
        message_index=message_index,
    )


def test_timed_effects_follow_the_book_unit():
    """sticky 2: in messages (default) the reply turn index does not matter, and vice versa."""
    sticky = [entry(1, keys=("凯尔希",), sticky=2)]
    first = run(sticky, ["凯尔希来了"], turn=1, message_index=100)
    # two bot replies later but 5 chat messages later: over in message units
    later = run(sticky, ["吃饭"], state=first.state, turn=3, message_index=105)
    assert [a.reason for a in later.activated] == []
    replies = {"book_options": {"a": {"timed_unit": "replies"}}}
    first_r = run(sticky, ["凯尔希来了"], turn=1, message_index=100, **replies)
    later_r = run(sticky, ["吃饭"], state=first_r.state, turn=3, message_index=105, **replies)
    assert [a.reason for a in later_r.activated] == ["sticky"]


def test_sillytavern_sticky_then_cooldown_in_messages():
    """sticky 2 at chat length 10: active while the length is < 12; the 3-message cooldown
    starts at the first scan after that (13 here, not 12) and covers 13..15."""
    e = [entry(1, keys=("凯尔希",), sticky=2, cooldown=3)]
    state = run(e, ["凯尔希"], message_index=10).state
    reasons = []
    for index in (11, 13, 15, 16):
        result = run(e, ["凯尔希"], state=state, message_index=index)
        reasons.append(result.activated[0].reason if result.activated else result.skipped[0].reason)
        state = result.state
    assert reasons == ["sticky", "cooldown", "cooldown", "key"]


def test_sillytavern_cooldown_without_sticky_and_state_round_trip():
    e = [entry(1, keys=("凯尔希",), cooldown=2)]
    state = run(e, ["凯尔希"], message_index=10).state  # cooling while 10 < length < 12
    assert WorldbookState.from_dict(state.to_dict()) == state
    assert run(e, ["凯尔希"], state=state, message_index=11).skip_reason("a.1") == "cooldown"
    assert run(e, ["凯尔希"], state=state, message_index=12).activated


def test_per_book_recursion_step_limit():
    entries = [
        entry(1, "提到了源石", book="a", keys=("罗德岛",)),
        entry(2, "源石是矿物", book="b", keys=("源石",)),
        entry(3, "源石是矿物", book="c", keys=("源石",)),
    ]
    result = run(
        entries,
        ["罗德岛"],
        max_recursion_steps=3,
        book_options={"b": {"max_recursion_steps": 0}},
    )
    assert {(a.entry.book, a.step) for a in result.activated} == {("a", 0), ("c", 1)}
    assert result.skip_reason("b.2") == "book_step_limit"


def test_per_book_token_cap_drops_whole_entries():
    entries = [
        entry(1, "一" * 30, book="big", keys=("x",), order=300),
        entry(2, "二" * 30, book="big", keys=("x",), order=200),
        entry(3, "三" * 30, book="small", keys=("x",), order=100),
    ]
    result = run(
        entries, ["x"], budget_cap_tokens=0, book_options={"big": {"budget_cap_tokens": 40}}
    )
    assert [a.key_id for a in result.activated] == ["small.3", "big.1"]
    assert result.skip_reason("big.2") == "budget"
    assert all(len(a.entry.content) == 30 for a in result.activated), "never cut"


@pytest.mark.parametrize(
    ("key", "message", "hit"),
    [
        ("doc", "the doctor is in", False),
        ("doc", "ask the doc", True),
        ("Doc", "DOC!", True),
        ("罗德岛", "我在罗德岛上", True),
        ("doc", "我是doc啊", True),
        ("two words", "say two words now", True),
    ],
)
def test_whole_words_by_default(key, message, hit):
    assert bool(run([entry(1, keys=(key,))], [message]).activated) is hit
