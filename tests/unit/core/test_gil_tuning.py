"""The loop waits at most ~1 ms for a worker thread's GIL; the environment may say otherwise."""

from __future__ import annotations

import sys

import pytest

from pallas.core import gil_tuning


@pytest.fixture(autouse=True)
def restore_interval():
    before = sys.getswitchinterval()
    yield
    sys.setswitchinterval(before)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("", 0.001), ("0.002", 0.002), ("nonsense", 0.001), ("0", 0.001), ("-1", 0.001)],
)
def test_switch_interval(monkeypatch, raw: str, expected: float) -> None:
    monkeypatch.setenv("PALLAS_SWITCH_INTERVAL", raw)
    assert gil_tuning.tune() == expected
    assert sys.getswitchinterval() == pytest.approx(expected)
