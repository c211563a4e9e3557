"""Opt-in pytest plugin: name the tests that leave an aiosqlite connection's thread running.

The tests share one event loop (`asyncio_default_test_loop_scope = "session"`), so work a test
leaves queued — a write-behind flush, an engine never disposed — runs in a later test, on an
engine already disposed, and opens a connection nobody closes. Its thread finishes an operation
after the loop has closed, and pytest reports "Event loop is closed" in whichever unrelated test
runs then. This plugin writes, for each test after which a connection thread started during it
is still alive, the test and where the thread was started (the project's frames only):

    PALLAS_THREAD_LEAKS=/tmp/leaks.txt .venv/bin/python -m pytest -p tests.harness.thread_leaks \
        tests/integration -n 2

Each test waits 50 ms at its end for threads being closed, so it is not on by default.
"""

from __future__ import annotations

import os
import threading
import time
import traceback
from collections.abc import Generator
from pathlib import Path

import pytest

WORKER = "_connection_worker_thread"  # aiosqlite's thread target, in the thread's name
_STARTED: dict[int, str] = {}  # thread ident → where it was started
_start = threading.Thread.start


def _recording_start(self: threading.Thread) -> None:
    _start(self)
    if WORKER in self.name and self.ident is not None:
        frames = traceback.extract_stack()[:-1]
        ours = [f for f in frames if "/pallas/" in f.filename or "/tests/" in f.filename]
        _STARTED[self.ident] = "".join(traceback.format_list(ours[-8:]))


def _alive() -> set[int]:
    return {t.ident for t in threading.enumerate() if WORKER in t.name and t.ident is not None}


def pytest_configure(config: pytest.Config) -> None:
    threading.Thread.start = _recording_start  # type: ignore[method-assign]


def pytest_unconfigure(config: pytest.Config) -> None:
    threading.Thread.start = _start  # type: ignore[method-assign]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None]:
    before = _alive()
    yield
    time.sleep(0.05)  # a connection being closed right now is not a leak
    left = sorted(_alive() - before)
    out = os.environ.get("PALLAS_THREAD_LEAKS")
    if left and out:
        with Path(out).open("a", encoding="utf-8") as report:
            for ident in left:
                report.write(f"=== {item.nodeid}\n{_STARTED.get(ident, '(start not seen)')}\n")
