"""The per-member limiter: a token bucket of `burst` turns refilled at `turns` per window."""

from __future__ import annotations

import pytest

from pallas.features.cost.config import MemberLimitConfig
from pallas.features.cost.rate_limit import (
    ALLOWED,
    CEILING_NOTIFY,
    CONVERSATION,
    DISABLED,
    EXEMPT,
    LIMITED,
    LIMITED_NOTIFY,
    BucketState,
    decide_member_turn,
)

T0 = 1_760_000_000.0
LIMITS = MemberLimitConfig(turns=6, window_s=600, burst=3)  # one token every 100 s


def run(times: list[float], limits: MemberLimitConfig = LIMITS) -> list[str]:
    """Reasons for a member's turns at `times` (seconds after T0), state carried along."""
    state: BucketState | None = None
    reasons = []
    for t in times:
        decision = decide_member_turn(state, T0 + t, limits)
        state = decision.state or state
        reasons.append(decision.reason)
    return reasons


@pytest.mark.parametrize(
    ("times", "expected"),
    [
        # a quiet member may take `burst` turns back to back, then is refused
        ([0, 1, 2], [ALLOWED] * 3),
        ([0, 1, 2, 3], [ALLOWED] * 3 + [LIMITED_NOTIFY]),
        # the phrase comes once per window, later refusals are silent
        ([0, 1, 2, 3, 4, 5], [ALLOWED] * 3 + [LIMITED_NOTIFY, LIMITED, LIMITED]),
        # one token back after 100 s
        ([0, 1, 2, 3, 103], [ALLOWED] * 3 + [LIMITED_NOTIFY, ALLOWED]),
        # refused again inside the same window: no second phrase
        ([0, 1, 2, 3, 103, 104], [ALLOWED] * 3 + [LIMITED_NOTIFY, ALLOWED, LIMITED]),
        # after the window the phrase may come again
        ([0, 1, 2, 3, 700, 701, 702, 703], [ALLOWED] * 3 + [LIMITED_NOTIFY] + [ALLOWED] * 3
         + [LIMITED_NOTIFY]),
        # a steady asker gets `turns` per window: one every 100 s is always fine
        ([i * 100 for i in range(12)], [ALLOWED] * 12),
        # refill never exceeds burst: a long pause gives `burst` turns, not more
        ([0, 86_400, 86_401, 86_402, 86_403], [ALLOWED] * 4 + [LIMITED_NOTIFY]),
    ],
    ids=[
        "burst", "over-burst", "once-per-window", "refill", "refill-then-silent",
        "next-window", "steady-rate", "refill-capped",
    ],
)  # fmt: skip
def test_windows_and_burst(times: list[float], expected: list[str]) -> None:
    assert run(times) == expected


def test_twenty_ats_in_a_minute_get_burst_plus_refill() -> None:
    reasons = run([i * 3.0 for i in range(20)])
    assert reasons.count(ALLOWED) == 3  # 3 + 57 s × 0.01/s refill < 4
    assert reasons.count(LIMITED_NOTIFY) == 1


@pytest.mark.parametrize(
    ("limits", "exempt", "reason"),
    [
        (LIMITS, True, EXEMPT),
        (LIMITS.model_copy(update={"enabled": False}), False, DISABLED),
    ],
)
def test_exempt_and_disabled_never_refuse_and_store_nothing(
    limits: MemberLimitConfig, exempt: bool, reason: str
) -> None:
    spent = BucketState(0.0, T0)
    for i in range(10):
        decision = decide_member_turn(spent, T0 + i, limits, exempt=exempt)
        assert decision.allowed and decision.reason == reason and decision.state is None


def test_clock_jumping_back_refills_nothing_and_does_not_block_the_phrase() -> None:
    state = BucketState(0.0, T0, notified_at=T0)
    back = decide_member_turn(state, T0 - 3600, LIMITS)
    assert not back.allowed
    assert back.notify  # the old notice is "in the future": expired, not a month of silence
    assert back.state is not None and back.state.at == T0 - 3600
    # from the new time on, refill runs normally
    again = decide_member_turn(back.state, T0 - 3600 + 100, LIMITS)
    assert again.allowed


def test_clock_jumping_forward_refills_to_burst_only() -> None:
    state = BucketState(0.0, T0)
    decision = decide_member_turn(state, T0 + 10 * 86_400, LIMITS)
    assert decision.allowed and decision.state is not None
    assert decision.state.tokens == pytest.approx(2.0)


def test_retry_after_names_the_next_token() -> None:
    state = BucketState(0.25, T0, notified_at=T0)
    decision = decide_member_turn(state, T0, LIMITS)
    assert not decision.allowed and decision.reason == LIMITED
    assert decision.retry_after_s == pytest.approx(75.0)


@pytest.mark.parametrize(
    "raw", [None, 3, "x", {"tokens": "a", "at": 1}, {"at": 1.0}, {"tokens": 1, "at": None}]
)
def test_broken_stored_state_counts_as_a_fresh_bucket(raw: object) -> None:
    assert BucketState.from_json(raw) is None


def test_state_round_trips_through_json() -> None:
    state = BucketState(1.5, T0, notified_at=T0 - 5)
    assert BucketState.from_json(state.to_json()) == state


# -- conversation: a paced line after the bot's answer takes no flood token ------------------
PACED = MemberLimitConfig(
    turns=6, window_s=600, burst=3, conversation_daily_turns=5, conversation_gap_s=8
)
LINES = ["那你喜欢爬山吗", "我上次爬的是泰山", "日出特别好看", "下次想去黄山", "你去过吗", "哈哈"]


def talk(steps: list[tuple[float, str | None]], limits: MemberLimitConfig = PACED) -> list[str]:
    """`(t, line)`: the member's turn; `(t, None)`: the bot answers the member at t."""
    state: BucketState | None = None
    today, reasons = 0, []
    for t, line in steps:
        if line is None:
            state = state.answered(T0 + t) if state else state
            continue
        d = decide_member_turn(state, T0 + t, limits, text=line, conversation_today=today)
        state, today = d.state or state, today + d.counts_conversation
        reasons.append(d.reason if d.allowed else f"{d.reason} ({d.pace})")
    return reasons


def answered_every(gap: float, lines: list[str], answer_after: float = 2.0) -> list:
    steps: list[tuple[float, str | None]] = []
    for i, line in enumerate(lines):
        steps += [(i * gap, line), (i * gap + answer_after, None)]
    return steps


@pytest.mark.parametrize(
    ("steps", "expected"),
    [
        # each line 25 s after the last, the bot answered in between: conversation
        (answered_every(25, LINES[:4]), [ALLOWED] + [CONVERSATION] * 3),
        # the same pace without answers from the bot: every line takes a token
        ([(i * 25, line) for i, line in enumerate(LINES[:4])],
         [ALLOWED] * 3 + [f"{LIMITED_NOTIFY} (not_answered)"]),
        # answered, but 3 s apart: a burst, not a conversation
        (answered_every(3, LINES[:4], answer_after=1), [ALLOWED] * 3
         + [f"{LIMITED_NOTIFY} (too_soon)"]),
        # the same line again (or nearly), however slowly: a repeat
        (answered_every(25, ["在吗在吗在吗", "在吗在吗在吗", "在吗 在吗在吗", "在吗在吗在吗！"]),
         [ALLOWED] * 3 + [f"{LIMITED_NOTIFY} (repeat)"]),
        # past the daily ceiling (5) paced lines fall back to the bucket, then are refused
        (answered_every(25, LINES + LINES[:4]),
         [ALLOWED] + [CONVERSATION] * 5 + [ALLOWED] * 3 + [f"{CEILING_NOTIFY} (paced)"]),
    ],
    ids=["paced", "unanswered", "too-soon", "repeat", "ceiling"],
)  # fmt: skip
def test_conversation_or_flood(steps: list[tuple[float, str | None]], expected: list[str]) -> None:
    assert talk(steps) == expected


def test_pacing_off_is_the_bucket_alone() -> None:
    off = PACED.model_copy(update={"conversation_daily_turns": 0})
    assert talk(answered_every(25, LINES[:4]), off) == [ALLOWED] * 3 + [
        f"{LIMITED_NOTIFY} (pacing_off)"
    ]


def test_the_state_survives_the_store() -> None:
    state = BucketState(1.5, T0, None, turn_at=T0, answered_at=T0 + 2, text="你好")
    assert BucketState.from_json(state.to_json()) == state
    assert BucketState.from_json({"tokens": 1, "at": T0}) == BucketState(1.0, T0)  # old rows
    assert BucketState.from_json({"tokens": "x", "at": T0}) is None
