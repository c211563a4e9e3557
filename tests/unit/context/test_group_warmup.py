"""`GroupPreload`: which lines queue a group's warm-up, and what a warm-up runs."""

from __future__ import annotations

import asyncio
import logging
from types import SimpleNamespace
from typing import Any

import pytest

from pallas.core.clock import FakeClock
from pallas.core.group_preload import GroupPreload
from pallas.core.records import StoredMessage

BOT = 9


def line(group: int, bot: int = BOT) -> StoredMessage:
    return StoredMessage(bot, group, 1, 5, 1.0, "早")


def config(enabled: bool = True) -> Any:
    return SimpleNamespace(enabled=enabled)


class Loads:
    def __init__(self) -> None:
        self.calls: list[tuple[str, int, int]] = []

    def load(self, name: str, fail: bool = False):
        async def run(bot_id: int, group_id: int, cfg: Any, now: float) -> None:
            self.calls.append((name, bot_id, group_id))
            if fail:
                raise RuntimeError("db down")

        return run


def warmup(loads: Loads, clock: FakeClock, **kw: Any) -> GroupPreload:
    disabled = kw.pop("disabled", ())
    return GroupPreload(
        [loads.load("a"), loads.load("b")],
        clock=clock,
        group_config=lambda g: config(g not in disabled),
        **kw,
    )


async def test_a_group_is_warmed_once_per_refresh_and_each_group_on_its_own() -> None:
    clock, loads = FakeClock(), Loads()
    w = warmup(loads, clock, refresh_s=100)
    for _ in range(3):
        w.seen(line(1))
    w.seen(line(2))
    w.seen(line(1, bot=10))  # another bot: its own group
    await w.drain()
    assert loads.calls == [
        ("a", BOT, 1), ("b", BOT, 1), ("a", BOT, 2), ("b", BOT, 2), ("a", 10, 1), ("b", 10, 1)
    ]  # fmt: skip
    loads.calls.clear()
    clock.advance(99)
    w.seen(line(1))
    await w.drain()
    assert loads.calls == []
    clock.advance(2)  # the caches the warm-up filled are getting old: once more
    w.seen(line(1))
    await w.drain()
    assert loads.calls == [("a", BOT, 1), ("b", BOT, 1)]


async def test_private_chats_silent_groups_and_a_closed_warmup_load_nothing() -> None:
    clock, loads = FakeClock(), Loads()
    w = warmup(loads, clock, disabled=(3,))
    w.seen(line(0))
    w.seen(line(3))
    await w.drain()
    assert loads.calls == []
    await w.close()
    w.seen(line(4))
    await w.drain()
    assert loads.calls == []


async def test_warm_ups_per_refresh_are_bounded_and_a_skipped_group_is_warmed_later() -> None:
    clock, loads = FakeClock(), Loads()
    w = warmup(loads, clock, refresh_s=100, max_per_refresh=2)
    for group in (1, 2, 3, 3, 1):  # 3: over the budget (it loads on its own first @)
        w.seen(line(group))
        await w.drain()
    assert [g for name, _, g in loads.calls if name == "a"] == [1, 2]
    clock.advance(100)
    for group in (3, 1, 2):
        w.seen(line(group))
        await w.drain()
    assert [g for name, _, g in loads.calls if name == "a"] == [1, 2, 3, 1]


async def test_a_failing_load_is_logged_and_the_others_still_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock, loads = FakeClock(), Loads()
    w = GroupPreload(
        [loads.load("a", fail=True), loads.load("b")],
        clock=clock,
        group_config=lambda g: config(),
    )
    with caplog.at_level(logging.ERROR, logger="pallas.chat"):
        w.seen(line(1))
        await w.drain()
    assert loads.calls == [("a", BOT, 1), ("b", BOT, 1)]
    assert "warm-up load failed" in caplog.text


@pytest.mark.parametrize(("groups", "logged_at_info"), [(1, False), (9, False), (10, True)])
async def test_a_run_of_many_groups_says_when_it_is_done(
    caplog: pytest.LogCaptureFixture, groups: int, logged_at_info: bool
) -> None:
    clock, loads = FakeClock(), Loads()
    w = GroupPreload([loads.load("a")], clock=clock, group_config=lambda g: config())
    with caplog.at_level(logging.DEBUG, logger="pallas.chat"):
        for group in range(1, groups + 1):
            w.seen(line(group))
        await w.drain()
    done = [r for r in caplog.records if "groups warmed in" in r.getMessage()]
    assert len(done) == 1 and f"{groups} groups warmed" in done[0].getMessage()
    assert (done[0].levelno == logging.INFO) is logged_at_info


async def test_each_load_starts_only_after_yield_to() -> None:
    """The OneBot edge makes `yield_to` wait while an addressed turn prepares: no load of a
    warm-up starts meanwhile; the one running is not interrupted."""
    clock, loads = FakeClock(), Loads()
    gate = asyncio.Event()
    gate.set()
    yields = 0

    async def yield_to() -> None:
        nonlocal yields
        yields += 1
        await gate.wait()

    w = warmup(loads, clock, yield_to=yield_to)
    w.seen(line(1))
    await asyncio.sleep(0)
    assert loads.calls == [("a", BOT, 1), ("b", BOT, 1)] and yields == 2
    gate.clear()  # an @ prepares from now on
    w.seen(line(2))
    for _ in range(5):
        await asyncio.sleep(0)
    assert loads.calls[2:] == [] and yields == 3
    gate.set()
    await w.drain()
    assert loads.calls[2:] == [("a", BOT, 2), ("b", BOT, 2)]
