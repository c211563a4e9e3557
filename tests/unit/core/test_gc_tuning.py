"""The start-up heap is frozen once the bot is up; thresholds only from the environment."""

from __future__ import annotations

import gc

import pytest

from pallas.core import gc_tuning


@pytest.fixture
def restore_gc():
    thresholds = gc.get_threshold()
    yield
    gc.unfreeze()  # the test process keeps collecting everything
    gc.set_threshold(*thresholds)


def test_settle_freezes_the_surviving_heap(restore_gc, monkeypatch) -> None:
    monkeypatch.delenv("PALLAS_GC_DEFAULTS", raising=False)
    kept = [object() for _ in range(10)]
    gc_tuning.settle()
    assert gc.get_freeze_count() > len(kept)
    assert gc.get_count()[0] < 700  # the young generation starts empty after the freeze


def test_defaults_switch_skips_the_freeze(restore_gc, monkeypatch) -> None:
    monkeypatch.setenv("PALLAS_GC_DEFAULTS", "1")
    gc.unfreeze()
    assert gc_tuning.settle() == 0.0
    assert gc.get_freeze_count() == 0


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("5000,10,10", (5000, 10, 10)), ("", None), ("bad", None), ("1,2", None)],
)
def test_thresholds_come_only_from_the_environment(restore_gc, monkeypatch, raw, expected):
    monkeypatch.setenv("PALLAS_GC_THRESHOLDS", raw)
    before = gc.get_threshold()
    gc_tuning.tune()
    assert gc.get_threshold() == (expected or before)
