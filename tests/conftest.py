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


# the slow scopes: every e2e test starts a bot process (~5 s each) or a browser; a plugins test
# runs the NoneBot plugins in the worker
SLOW_SCOPES = ("tests/plugins", "tests/e2e/")


def scope_order(scope: str, tests: int) -> tuple[int, int]:
    """The order `make test` hands out its units of work: the slow ones first, more tests
    first among them, then the rest by test count (xdist's own order) — the longest jobs start
    while every worker is free, and the last ones are short files that let both end together."""
    return (0 if scope.startswith(SLOW_SCOPES) else 1, -tests)


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """`make test`'s xdist scheduling: one file per unit of work (as `--dist loadfile`), except
    tests/plugins, which is ONE unit: its package-scoped fixture loads the NoneBot plugins into
    the worker's process, which can happen once per process — a worker that ran some plugin
    files, then other files, then plugin files again would load them a second time. Units are
    handed out in `scope_order`."""
    from xdist.scheduler import LoadFileScheduling

    class PluginsTogether(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            if nodeid.startswith("tests/plugins/"):
                return "tests/plugins"
            return str(super()._split_scope(nodeid))

        def _assign_work_unit(self, node: object) -> None:
            # the first assignment comes right after `schedule` filled the queue
            if not getattr(self, "_ordered", False):
                self._ordered = True
                units = sorted(
                    self.workqueue.items(), key=lambda unit: scope_order(unit[0], len(unit[1]))
                )
                self.workqueue.clear()
                self.workqueue.update(units)
            super()._assign_work_unit(node)

    return PluginsTogether(config, log)
