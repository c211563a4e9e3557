"""Hostile input costs a few lines per kind a minute, then a count of the rest."""

from __future__ import annotations

from pallas.core.log_limit import LogLimiter, skipped_note


def test_a_few_lines_per_kind_then_a_count() -> None:
    now = [0.0]
    limiter = LogLimiter(per_window=2, window_s=60, clock=lambda: now[0])
    assert [limiter.allow("frame:too_deep") for _ in range(5)] == [
        (True, 0), (True, 0), (False, 0), (False, 0), (False, 0),
    ]  # fmt: skip
    assert limiter.allow("message:user_id") == (True, 0)  # another kind has its own lines
    now[0] = 61
    assert limiter.allow("frame:too_deep") == (True, 3)  # the next line says what was skipped
    assert skipped_note(3) == " (3 more like it not logged)" and skipped_note(0) == ""


def test_keys_are_bounded() -> None:
    limiter = LogLimiter(per_window=1, max_keys=3, clock=lambda: 0.0)
    for i in range(10):
        assert limiter.allow(f"kind {i}") == (True, 0)
    assert len(limiter._windows) == 3
