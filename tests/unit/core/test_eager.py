"""`eager_gather`: gather's results, without loop rounds for coroutines that never suspend."""

from __future__ import annotations

import asyncio

import pytest

from pallas.core.eager import eager_gather


async def ready(value: int, log: list[str]) -> int:
    log.append(f"ready {value}")
    return value


async def sleeps(value: int, log: list[str], *, rounds: int = 2) -> int:
    log.append(f"start {value}")
    for _ in range(rounds):
        await asyncio.sleep(0)
    await asyncio.sleep(0.001)  # a real future
    log.append(f"end {value}")
    return value


async def fails(log: list[str]) -> int:
    log.append("fails")
    raise ValueError("boom")


async def test_coroutines_that_never_suspend_cost_no_loop_round() -> None:
    log: list[str] = []
    other = asyncio.get_running_loop().create_task(ready(0, log))  # runs on the next round
    assert await eager_gather(ready(1, log), ready(2, log)) == [1, 2]
    assert log == ["ready 1", "ready 2"]  # the other task has not run: no round was waited
    await other


async def test_results_keep_argument_order_and_suspended_ones_run_side_by_side() -> None:
    log: list[str] = []
    got = await eager_gather(sleeps(1, log), ready(2, log), sleeps(3, log, rounds=0))
    assert got == [1, 2, 3]
    assert log[:3] == ["start 1", "ready 2", "start 3"]  # stepped in order, then overlapped
    assert sorted(log[3:]) == ["end 1", "end 3"]
    assert await eager_gather() == []


async def test_the_first_exception_is_raised_as_gather_does() -> None:
    log: list[str] = []
    with pytest.raises(ValueError, match="boom"):
        await eager_gather(ready(1, log), fails(log), sleeps(3, log))
    with pytest.raises(ValueError, match="boom"):
        await eager_gather(sleeps(4, log), fails_later(log))


async def fails_later(log: list[str]) -> int:
    await asyncio.sleep(0)
    raise ValueError("boom")


async def test_a_suspended_coroutine_sees_futures_results_exceptions_and_cancellation() -> None:
    loop = asyncio.get_running_loop()
    fut: asyncio.Future[str] = loop.create_future()
    bad: asyncio.Future[str] = loop.create_future()

    async def waits() -> str:
        return await fut + "!"

    async def catches() -> str:
        try:
            await bad
        except KeyError:
            return "caught"
        return "no"

    loop.call_soon(fut.set_result, "ok")
    loop.call_soon(bad.set_exception, KeyError("x"))
    assert await eager_gather(waits(), catches()) == ["ok!", "caught"]

    cancelled: list[bool] = []

    async def forever() -> None:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.append(True)
            raise

    task = asyncio.ensure_future(eager_gather(forever()))
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert cancelled == [True]
