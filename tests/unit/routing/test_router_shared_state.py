"""Routing over a store shared by concurrent turns, and over a store that cannot be reached.

`YieldingStore` gives control back to the event loop before every operation, as a network
store does: two turns routed with `asyncio.gather` then interleave step by step and decide on
the same snapshot — the situation of two processes sharing Redis.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from typing import Any

import pytest

from pallas.core.clock import FakeClock
from pallas.core.state import MemoryStateStore, StateUnavailableError, claim
from pallas.routing.config import AmbientConfig, CooldownConfig, RoutingConfig
from pallas.routing.evaluate import RouteOutcome, RouteResult
from pallas.routing.router import STATE_RETRY_S, Router
from pallas.turn.parts.merges import TurnMerges
from tests.unit.routing.helpers import ALIASES, ALICE, BOB, BOT, GROUP, T0, turn

QUIET = RoutingConfig(ambient=AmbientConfig(enabled=False))
# an @ held by the cooldown as well (not the default)
WAITING = RoutingConfig(
    ambient=AmbientConfig(enabled=False), cooldown=CooldownConfig(addressed_waits_cooldown=True)
)


class YieldingStore(MemoryStateStore):
    async def _yield(self) -> None:
        await asyncio.sleep(0)

    async def get(self, key: str) -> Any:
        await self._yield()
        return await super().get(key)

    async def set(self, key: str, value: Any, *, ttl: float | None = None) -> None:
        await self._yield()
        await super().set(key, value, ttl=ttl)

    async def set_if_absent(self, key: str, value: Any, *, ttl: float | None = None) -> bool:
        await self._yield()
        return await super().set_if_absent(key, value, ttl=ttl)

    async def delete(self, key: str) -> None:
        await self._yield()
        await super().delete(key)

    async def push(self, key: str, value: Any, *, maxlen: int, ttl: float | None = None) -> None:
        await self._yield()
        await super().push(key, value, maxlen=maxlen, ttl=ttl)

    async def items(self, key: str) -> list[Any]:
        await self._yield()
        return await super().items(key)

    async def take(self, key: str) -> list[Any]:
        await self._yield()
        return await super().take(key)

    async def read(
        self, values: Sequence[str], lists: Sequence[str] = ()
    ) -> tuple[list[Any], list[list[Any]]]:
        await self._yield()
        return await super().read(values, lists)


class UnreachableClaims(MemoryStateStore):
    """Claims on keys containing `marker` fail as if Redis were down; the rest works."""

    def __init__(self, clock: FakeClock, marker: str) -> None:
        super().__init__(clock)
        self.marker = marker

    async def set_if_absent(self, key: str, value: Any, *, ttl: float | None = None) -> bool:
        if self.marker in key:
            raise StateUnavailableError("redis://test is unreachable")
        return await super().set_if_absent(key, value, ttl=ttl)


async def _route(
    engine: Router, text: str, config: RoutingConfig = QUIET, **kwargs: Any
) -> RouteResult:
    t = turn(text, time=T0, **kwargs)
    return await engine.route(t, config, aliases=ALIASES, now=T0, rng=random.Random(3))


async def test_two_interleaved_turns_of_one_member_start_one_llm_turn() -> None:
    engine = Router(YieldingStore(FakeClock(T0)))
    results = await asyncio.gather(
        _route(engine, "帮我看看这个报错", at_bot=True, message_id=1),
        _route(engine, "就是那个404的", at_bot=True, message_id=2),
    )
    assert sorted(r.outcome.value for r in results) == ["merge", "reply"]
    assert await engine.in_flight_count(BOT, GROUP) == 1


async def test_two_interleaved_ats_in_one_group_are_both_answered_by_default() -> None:
    engine = Router(YieldingStore(FakeClock(T0)))
    results = await asyncio.gather(
        _route(engine, "帮我看看这个报错", at_bot=True, message_id=1, user=ALICE),
        _route(engine, "我也想问一个问题", at_bot=True, message_id=2, user=BOB),
    )
    assert [r.outcome.value for r in results] == ["reply", "reply"]
    assert await engine.in_flight_count(BOT, GROUP) == 2


async def test_two_interleaved_turns_in_one_group_respect_the_cooldown() -> None:
    engine = Router(YieldingStore(FakeClock(T0)))
    results = await asyncio.gather(
        _route(engine, "帮我看看这个报错", WAITING, at_bot=True, message_id=1, user=ALICE),
        _route(engine, "我也想问一个问题", WAITING, at_bot=True, message_id=2, user=BOB),
    )
    assert sorted(r.outcome.value for r in results) == ["accumulate", "reply"]
    held = next(r for r in results if r.outcome is RouteOutcome.ACCUMULATE)
    assert (held.stage, held.reason) == ("cooldown", "cooldown_claimed")
    assert await engine.in_flight_count(BOT, GROUP) == 1  # the loser freed its marker


async def test_a_parked_line_is_never_lost_by_a_concurrent_drain() -> None:
    merges = TurnMerges(YieldingStore(FakeClock(T0)))
    first = turn("第一句", message_id=1)
    await merges.park(first)
    drained, _ = await asyncio.gather(merges.drain(first), merges.park(turn("第二句")))
    rest = await merges.drain(first)
    assert [*drained.texts, *rest.texts] == ["第一句", "第二句"]


async def test_unreachable_dedupe_retries_an_addressed_message_and_skips_the_rest() -> None:
    store = UnreachableClaims(FakeClock(T0), ":seen:")
    engine = Router(store)
    addressed = await _route(engine, "这个怎么弄啊", at_bot=True, message_id=1)
    assert (addressed.outcome, addressed.stage, addressed.reason) == (
        RouteOutcome.ACCUMULATE,
        "dedupe",
        "state_unavailable",
    )
    assert addressed.cooldown is not None and addressed.cooldown.retry_after_s == STATE_RETRY_S
    ambient = await _route(engine, "有人知道这个怎么弄吗", message_id=2)
    assert (ambient.outcome, ambient.reason) == (RouteOutcome.SKIP, "state_unavailable")
    # nothing was decided on the (unreadable) state, so nothing but the log records is written
    assert all(key.endswith(":decisions") for key in await store.keys(""))
    assert [r["reason"] for r in await engine.recent_decisions(BOT, GROUP)] == [
        "state_unavailable",
        "state_unavailable",
    ]


@pytest.mark.parametrize("marker", [":inflight:", ":turn_after:"])
async def test_unreachable_in_flight_or_cooldown_claims_do_not_block_a_claimed_message(
    marker: str,
) -> None:
    engine = Router(UnreachableClaims(FakeClock(T0), marker))
    result = await _route(engine, "这个怎么弄啊", at_bot=True, message_id=1)
    assert result.outcome is RouteOutcome.REPLY  # the message id is ours: fail open


async def test_claim_fails_the_way_the_caller_asks() -> None:
    store = UnreachableClaims(FakeClock(T0), "lock")
    assert await claim(store, "lock", 1, ttl=5, when_unavailable=False) is False
    assert await claim(store, "lock", 1, ttl=5, when_unavailable=True) is True
    assert await claim(store, "other", 1, ttl=5, when_unavailable=False) is True
    assert await claim(store, "other", 1, ttl=5, when_unavailable=True) is False
