from __future__ import annotations

from typing import Any

import pytest

from pallas.routing.config import CooldownConfig
from pallas.routing.cooldown import (
    AdmissionVerdict,
    CooldownVerdict,
    decide_admission,
    evaluate_cooldown,
)

NOW = 1_000.0


@pytest.mark.parametrize(
    ("kwargs", "verdict", "reason"),
    [
        ({"enabled": False}, CooldownVerdict.SKIP, "disabled"),
        ({"enabled": False, "addressed": True}, CooldownVerdict.SKIP, "disabled"),
        ({"silenced_until": NOW + 60}, CooldownVerdict.SKIP, "silenced"),
        ({"silenced_until": NOW + 60, "addressed": True}, CooldownVerdict.PROCEED, "proceed"),
        ({"silenced_until": NOW - 1}, CooldownVerdict.PROCEED, "proceed"),
        ({"last_turn_at": NOW - 1}, CooldownVerdict.ACCUMULATE, "cooldown"),
        # an @ is answered at once: the cooldown paces what the bot starts itself
        ({"last_turn_at": NOW - 1, "addressed": True}, CooldownVerdict.PROCEED, "proceed"),
        ({"last_turn_at": NOW - 3}, CooldownVerdict.PROCEED, "proceed"),
        ({}, CooldownVerdict.PROCEED, "proceed"),
    ],
)
def test_cooldown_table(kwargs: dict[str, Any], verdict: CooldownVerdict, reason: str) -> None:
    args: dict[str, Any] = {"enabled": True, "addressed": False, "now": NOW, **kwargs}
    result = evaluate_cooldown(CooldownConfig(), **args)
    assert (result.verdict, result.reason) == (verdict, reason)


def test_cooldown_reports_when_to_retry() -> None:
    result = evaluate_cooldown(
        CooldownConfig(), enabled=True, now=NOW, addressed=False, last_turn_at=NOW - 1
    )
    assert result.retry_after_s == pytest.approx(2.0)


def test_an_at_may_be_made_to_wait_out_the_cooldown() -> None:
    cfg = CooldownConfig(addressed_waits_cooldown=True)
    result = evaluate_cooldown(cfg, enabled=True, now=NOW, addressed=True, last_turn_at=NOW - 1)
    assert (result.verdict, result.reason) == (CooldownVerdict.ACCUMULATE, "cooldown")
    assert result.retry_after_s == pytest.approx(2.0)


def test_silence_can_hold_even_against_an_at() -> None:
    cfg = CooldownConfig(silence_breakable_by_address=False)
    result = evaluate_cooldown(cfg, enabled=True, now=NOW, addressed=True, silenced_until=NOW + 5)
    assert result.reason == "silenced"
    assert result.retry_after_s == pytest.approx(5.0)


@pytest.mark.parametrize(
    ("running", "queued", "in_flight", "verdict", "reason"),
    [
        (0, 0, False, AdmissionVerdict.RUN, "run"),
        (1, 0, False, AdmissionVerdict.RUN, "run"),
        (2, 0, False, AdmissionVerdict.QUEUE, "concurrency_full"),
        (2, 7, False, AdmissionVerdict.QUEUE, "concurrency_full"),
        (2, 8, False, AdmissionVerdict.REJECT, "queue_full"),
        (0, 0, True, AdmissionVerdict.MERGE, "user_in_flight"),
        (2, 8, True, AdmissionVerdict.MERGE, "user_in_flight"),
    ],
)
def test_admission_table(
    running: int, queued: int, in_flight: bool, verdict: AdmissionVerdict, reason: str
) -> None:
    result = decide_admission(
        CooldownConfig(), running=running, queued=queued, user_in_flight=in_flight
    )
    assert (result.verdict, result.reason) == (verdict, reason)
