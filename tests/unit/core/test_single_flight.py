"""pallas.core.single_flight: concurrent misses of one key share one load; a failure is not kept."""

from __future__ import annotations

import asyncio

import pytest

from pallas.core.single_flight import SingleFlight


async def test_concurrent_callers_share_one_load() -> None:
    loads = SingleFlight[str, int]()
    started = 0
    release = asyncio.Event()

    async def load() -> int:
        nonlocal started
        started += 1
        await release.wait()
        return 7

    callers = [asyncio.create_task(loads.run("g", load)) for _ in range(5)]
    other = asyncio.create_task(loads.run("h", load))
    await asyncio.sleep(0)
    assert "g" in loads and len(loads) == 2
    release.set()
    assert await asyncio.gather(*callers, other) == [7] * 6
    assert started == 2  # one per key
    assert "g" not in loads  # forgotten once done: the caller's cache keeps the value


async def test_a_failed_load_reaches_every_waiter_and_is_not_kept() -> None:
    loads = SingleFlight[str, int]()
    attempts = 0
    release = asyncio.Event()

    async def flaky() -> int:
        nonlocal attempts
        attempts += 1
        await release.wait()
        if attempts == 1:
            raise OSError("database away")
        return 3

    waiters = [asyncio.create_task(loads.run("g", flaky)) for _ in range(3)]
    await asyncio.sleep(0)
    release.set()
    results = await asyncio.gather(*waiters, return_exceptions=True)
    assert [type(r) for r in results] == [OSError] * 3
    assert await loads.run("g", flaky) == 3  # the next caller loads again
    assert attempts == 2


async def test_a_cancelled_caller_does_not_cancel_the_load_others_wait_for() -> None:
    loads = SingleFlight[str, int]()
    release = asyncio.Event()

    async def load() -> int:
        await release.wait()
        return 5

    first = asyncio.create_task(loads.run("g", load))
    second = asyncio.create_task(loads.run("g", load))
    await asyncio.sleep(0)
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    release.set()
    assert await second == 5
