from __future__ import annotations

import random
from typing import Any

import pytest

from pallas.routing.config import QuoteConfig
from pallas.routing.reply_targets import (
    add_candidate,
    decide_quote,
    is_live_candidate,
    resolve_quote_reply_target,
)
from tests.unit.routing.helpers import FixedRandom

NOW = 5_000.0


def test_candidates_are_a_bounded_deque_newest_last() -> None:
    candidates: list[int] = []
    for mid in range(1, 9):
        candidates = add_candidate(candidates, mid, maxlen=6)
    assert candidates == [3, 4, 5, 6, 7, 8]
    assert not is_live_candidate(candidates, 2)
    assert is_live_candidate(candidates, 3)


def test_re_adding_moves_to_the_end_without_duplicates() -> None:
    assert add_candidate([1, 2, 3], 1) == [2, 3, 1]


def test_negative_ids_are_normal() -> None:
    assert is_live_candidate(add_candidate([], -7340), -7340)


@pytest.mark.parametrize(
    ("requested", "live", "expected"),
    [(5, [4, 5], 5), (6, [4, 5], None), (None, [4, 5], None), (-3, [-3], -3)],
)
def test_resolve_quote_reply_target(requested: int | None, live: list[int], expected: int | None):
    assert resolve_quote_reply_target(requested, live) == expected


@pytest.mark.parametrize(
    ("kwargs", "rolls", "quote", "reason"),
    [
        ({}, (0.1,), True, "quote"),
        ({}, (0.25,), False, "quote_roll_miss"),
        ({"reply_to": None}, (0.0,), False, "no_reply_target"),
        ({"reply_to": 99}, (0.0,), False, "target_not_candidate"),
        ({"last_quote_at": NOW - 119}, (0.0,), False, "quote_cooldown"),
        ({"last_quote_at": NOW - 120}, (0.0,), True, "quote"),
        ({"config": QuoteConfig(enabled=False)}, (0.0,), False, "quote_disabled"),
        ({"config": QuoteConfig(probability=1.0)}, (0.99,), True, "quote"),
    ],
)
def test_decide_quote(
    kwargs: dict[str, Any], rolls: tuple[float, ...], quote: bool, reason: str
) -> None:
    args: dict[str, Any] = {
        "reply_to": 3,
        "candidates": [1, 2, 3],
        "last_quote_at": None,
        "now": NOW,
        "rng": FixedRandom(*rolls),
    }
    config = kwargs.pop("config", QuoteConfig())
    args.update(kwargs)
    result = decide_quote(config, **args)
    assert (result.quote, result.reason) == (quote, reason)
    assert result.reply_message_id == (3 if quote else None)


def test_quote_probability_is_about_a_quarter() -> None:
    rng = random.Random(20261129)
    hits = sum(
        decide_quote(
            QuoteConfig(), reply_to=3, candidates=[3], last_quote_at=None, now=NOW, rng=rng
        ).quote
        for _ in range(4000)
    )
    assert 850 <= hits <= 1150
