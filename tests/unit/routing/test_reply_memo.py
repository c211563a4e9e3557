"""`BotReplyMemo`: the route state's parsed bot replies equal a fresh parse, read after read."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from pallas.routing.reply_memo import BotReplyMemo
from pallas.routing.route_state import BotReply


def fresh(raw: list[Any]) -> tuple[BotReply, ...]:
    return tuple(BotReply.from_json(r) for r in raw if isinstance(r, Mapping))


def reply(t: float, user: int = 1, kind: Any = "reply") -> dict[str, Any]:
    return {"t": t, "user": user, "kind": kind}


def test_a_growing_then_sliding_list_parses_like_a_fresh_parse():
    memo, raw = BotReplyMemo(), []
    for i in range(150):  # grows to 64, then one in one out (a full deque)
        raw = [*raw, reply(float(i), i % 7)][-64:]
        if i % 3 == 0:
            assert memo.parse("g1", list(raw)) == fresh(raw)  # unchanged: all reused
        assert memo.parse("g1", list(raw)) == fresh(raw)
    assert memo.reused > 100


def test_random_edits_and_odd_entries_parse_like_a_fresh_parse():
    rng = random.Random(3)
    memo = BotReplyMemo(max_groups=3)
    lists: dict[str, list[Any]] = {f"g{k}": [] for k in range(5)}
    odd = ["x", 5, None, {"t": 2, "user": 1.0}, reply(3.0, kind=True), reply(3.0, kind=1)]
    for step in range(3000):
        key = rng.choice(list(lists))
        raw = lists[key]
        action = rng.random()
        if action < 0.5:
            raw = [*raw, *(reply(step + j, rng.randrange(3)) for j in range(rng.randrange(1, 6)))]
        elif action < 0.6:
            raw = [*raw, rng.choice(odd)]
        elif action < 0.7:
            raw = [reply(rng.randrange(5)) for _ in range(rng.randrange(4))]  # replaced
        lists[key] = raw[-64:]
        assert memo.parse(key, list(lists[key])) == fresh(lists[key]), step
        assert len(memo._lists) <= 3


def test_equal_but_differently_typed_kinds_are_never_mixed_up():
    memo = BotReplyMemo()
    assert memo.parse("g", [reply(1.0, kind=True)]) == (BotReply(1.0, 1, "True"),)
    assert memo.parse("g", [reply(1.0, kind=1)]) == (BotReply(1.0, 1, "1"),)
    assert memo.parse("g", [reply(1.0, kind=1.0)]) == (BotReply(1.0, 1, "1.0"),)


def test_the_map_is_bounded():
    memo = BotReplyMemo(max_groups=2)
    for group in range(10):
        memo.parse(f"g{group}", [reply(1.0)])
    assert len(memo._lists) == 2
