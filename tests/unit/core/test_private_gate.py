"""The edge's private gate (pallas/onebot/private_gate.py): a flood of refused DMs costs a few
log lines a minute, each naming why, and the verdict follows `[private]` as it is reloaded."""

from __future__ import annotations

import logging
from types import SimpleNamespace
from typing import Any

import pytest

from pallas.config import GroupConfig
from pallas.core.log_limit import LogLimiter
from pallas.onebot.private_gate import PrivateGate


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def runtime(config: GroupConfig) -> Any:
    holder = SimpleNamespace(config=config)
    return SimpleNamespace(
        group_configs=SimpleNamespace(get=lambda group_id: holder.config),
        superusers=frozenset({10_001}),
        holder=holder,
    )


def dm(user: int, sub_type: str = "other", message_id: int = 1) -> Any:
    return SimpleNamespace(user_id=user, sub_type=sub_type, message_id=message_id)


def refusals(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "not answered" in r.getMessage()]


def test_a_flood_of_refused_dms_costs_three_lines_a_minute(caplog) -> None:
    clock = Clock()
    gate = PrivateGate(
        runtime(GroupConfig()), limiter=LogLimiter(per_window=3, window_s=60.0, clock=clock)
    )
    with caplog.at_level(logging.INFO, logger="pallas.inbound"):
        verdicts = [gate.admission(dm(50_000 + i, message_id=i)) for i in range(10)]
        clock.now = 61.0
        gate.admission(dm(60_000, message_id=99))
    assert {(v.allowed, v.reason) for v in verdicts} == {(False, "strangers_off")}
    lines = refusals(caplog)
    assert len(lines) == 4 and gate.refused == 11
    assert lines[0] == "private message 0 from 50000 not answered: strangers_off"
    assert lines[-1].endswith("not answered: strangers_off (7 more like it not logged)")


def test_the_gate_follows_the_reloaded_defaults_and_lets_superusers_through(caplog) -> None:
    rt = runtime(GroupConfig())
    gate = PrivateGate(rt)
    assert gate.admission(dm(42, "friend")).allowed
    assert not gate.admission(dm(43, "group")).allowed
    assert gate.admission(dm(10_001, "other")).reason == "superuser"
    rt.holder.config = GroupConfig.model_validate({"private": {"blocklist": [42]}})
    assert gate.admission(dm(42, "friend")).reason == "blocklisted"
    assert gate.decide(dm(44, "other")).allowed is False
