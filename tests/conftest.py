"""Shared fixtures. End-to-end fixtures live in tests/e2e/conftest.py."""

from __future__ import annotations

import random

import pytest

from pallas.core.clock import FakeClock


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def rng() -> random.Random:
    return random.Random(20261129)
