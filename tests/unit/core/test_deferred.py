"""`Deferred`: built once, on first use or on the loop's next round after `soon()`."""

from __future__ import annotations

import asyncio

import pytest

from pallas.core.deferred import Deferred


class Builder:
    def __init__(self, fail_times: int = 0) -> None:
        self.calls = 0
        self.fail_times = fail_times

    def __call__(self) -> dict[str, int]:
        self.calls += 1
        if self.calls <= self.fail_times:
            raise ValueError(f"build {self.calls} failed")
        return {"built": self.calls}


def test_get_builds_once_and_returns_the_same_value() -> None:
    build = Builder()
    deferred = Deferred(build)
    assert not deferred.built and build.calls == 0  # nothing built until asked
    first = deferred.get()
    assert deferred.get() is first and first == {"built": 1} and build.calls == 1


async def test_soon_builds_while_the_caller_awaits() -> None:
    build = Builder()
    deferred = Deferred(build)
    deferred.soon()
    assert build.calls == 0  # not in the caller's own step
    await asyncio.sleep(0)  # the caller awaits (the LLM call): the loop runs the build
    assert deferred.built and build.calls == 1
    deferred.soon()  # already built: nothing scheduled
    await asyncio.sleep(0)
    assert deferred.get() == {"built": 1} and build.calls == 1


async def test_get_before_the_loop_round_builds_once() -> None:
    build = Builder()
    deferred = Deferred(build)
    deferred.soon()
    assert deferred.get() == {"built": 1}  # the answer came back first
    await asyncio.sleep(0)  # the scheduled round finds it built
    assert build.calls == 1


async def test_a_failed_build_is_raised_by_get_and_retried() -> None:
    build = Builder(fail_times=2)
    deferred = Deferred(build)
    deferred.soon()
    await asyncio.sleep(0)  # fails quietly in the loop round
    assert not deferred.built and build.calls == 1
    with pytest.raises(ValueError, match="build 2 failed"):
        deferred.get()
    assert deferred.get() == {"built": 3}
