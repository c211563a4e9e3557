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


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """`make test`'s xdist scheduling: one file per unit of work (as `--dist loadfile`), except
    tests/plugins, which is ONE unit: its package-scoped fixture loads the NoneBot plugins into
    the worker's process, which can happen once per process — a worker that ran some plugin
    files, then other files, then plugin files again would load them a second time."""
    from xdist.scheduler import LoadFileScheduling

    class PluginsTogether(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            if nodeid.startswith("tests/plugins/"):
                return "tests/plugins"
            return str(super()._split_scope(nodeid))

    return PluginsTogether(config, log)
