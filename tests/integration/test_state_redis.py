"""RedisStateStore beyond the shared contract: outages, start-up, the runtime, and routing
shared by two processes (two engines, two clients, one Redis)."""

from __future__ import annotations

import asyncio
import logging
import random
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from pallas.core.settings import PallasSettings
from pallas.core.state import MemoryStateStore, StateUnavailableError, claim
from pallas.routing.config import AmbientConfig, CooldownConfig, RoutingConfig
from pallas.routing.evaluate import RouteOutcome, RouteResult
from pallas.routing.router import Router
from pallas.runtime import PallasRuntime
from tests.harness.redis_server import RedisServer, running_redis, unavailable_reason
from tests.unit.routing.helpers import ALIASES, ALICE, BOB, BOT, GROUP, turn

pytestmark = pytest.mark.skipif(unavailable_reason() is not None, reason=unavailable_reason() or "")

if unavailable_reason() is None:
    from pallas.core.state_redis import RedisStateStore, glob_escape, open_state_store, redact_url

QUIET = RoutingConfig(ambient=AmbientConfig(enabled=False))
WAITING = RoutingConfig(
    ambient=AmbientConfig(enabled=False), cooldown=CooldownConfig(addressed_waits_cooldown=True)
)


@pytest.fixture(scope="module")
def server() -> Iterator[RedisServer]:
    with running_redis() as srv:
        yield srv


def _prefix() -> str:
    return f"t{uuid.uuid4().hex[:10]}"


@pytest.fixture
async def pair(server: RedisServer) -> AsyncIterator[tuple[RedisStateStore, RedisStateStore]]:
    """Two clients ("processes") over one namespace."""
    prefix = _prefix()
    slow_ok = {"socket_timeout": 5.0, "connect_timeout": 5.0}  # a loaded CI machine
    a = RedisStateStore.from_url(server.url, prefix=prefix, **slow_ok)
    b = RedisStateStore.from_url(server.url, prefix=prefix, **slow_ok)
    yield a, b
    await a.aclose()
    await b.aclose()


# -- helpers ----------------------------------------------------------------------------------


def test_redact_url_hides_only_the_password() -> None:
    assert redact_url("redis://:s3cret@redis:6379/0") == "redis://:***@redis:6379/0"
    assert redact_url("rediss://user:pw@h:1/2") == "rediss://user:***@h:1/2"
    assert redact_url("redis://redis:6379/0") == "redis://redis:6379/0"


def test_glob_escape() -> None:
    assert glob_escape("a*b?[c]\\d") == "a\\*b\\?\\[c\\]\\\\d"


# -- outages ----------------------------------------------------------------------------------


async def test_a_dead_redis_gives_the_documented_fallbacks_quickly_then_recovers() -> None:
    with running_redis() as srv:
        store = RedisStateStore.from_url(srv.url, prefix=_prefix())
        try:
            await store.set("k", "v")
            await store.push("l", 1, maxlen=3)
            srv.stop()
            started = time.monotonic()
            assert await store.get("k") is None
            assert await store.items("l") == []
            assert await store.take("l") == []
            assert await store.keys("") == []
            assert await store.incr("c", 3, ttl=5) == 3
            await store.set("k2", 1)
            await store.push("l", 2, maxlen=3)
            await store.delete("k")
            with pytest.raises(StateUnavailableError):
                await store.set_if_absent("lock", 1)
            assert await claim(store, "lock", 1, when_unavailable=False) is False
            assert await claim(store, "lock", 1, when_unavailable=True) is True
            assert time.monotonic() - started < 1.0  # no op hangs on a dead server

            srv.start()  # same port, empty (no persistence)
            deadline = time.monotonic() + 5
            while not await _works(store):
                assert time.monotonic() < deadline, "the store did not reconnect"
                await asyncio.sleep(0.1)
            assert await store.set_if_absent("lock", 1)
            await store.push("l", 3, maxlen=3)
            assert await store.items("l") == [3]
        finally:
            await store.aclose()


async def _works(store: RedisStateStore) -> bool:
    await store.set("probe", 1)
    return await store.get("probe") == 1


async def test_a_server_that_never_answers_costs_one_timeout_then_fails_fast() -> None:
    async def swallow(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while await reader.read(1024):
                pass
        finally:
            writer.close()

    hung = await asyncio.start_server(swallow, "127.0.0.1", 0)
    port = hung.sockets[0].getsockname()[1]
    store = RedisStateStore.from_url(f"redis://127.0.0.1:{port}/0")
    try:
        started = time.monotonic()
        assert await store.get("k") is None
        assert time.monotonic() - started < 1.5  # one socket timeout (0.5 s), not a hang
        started = time.monotonic()
        for _ in range(20):
            assert await store.get("k") is None
        assert time.monotonic() - started < 0.2  # fail fast while it is known to be down
    finally:
        await store.aclose()
        hung.close()
        await hung.wait_closed()


# -- start-up ---------------------------------------------------------------------------------


async def test_open_state_store_picks_memory_or_redis(server: RedisServer) -> None:
    assert isinstance(await open_state_store(""), MemoryStateStore)
    store = await open_state_store(server.url, "deploy1")
    try:
        assert isinstance(store, RedisStateStore)
        assert store.namespace == "pallas:deploy1:"
        assert server.url in store.describe()
    finally:
        await store.aclose()


async def test_an_unreachable_redis_fails_start_up_without_leaking_the_password() -> None:
    with running_redis() as srv:
        url = f"redis://:hunter2@127.0.0.1:{srv.port}/0"
        srv.stop()
        started = time.monotonic()
        with pytest.raises(StateUnavailableError) as err:
            await open_state_store(url, wait_s=0.6)
        assert time.monotonic() - started < 3
    message = str(err.value)
    assert "hunter2" not in message and ":***@127.0.0.1" in message
    assert "PALLAS_STATE_URL" in message


async def test_the_runtime_opens_and_closes_the_configured_store(
    server: RedisServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = PallasSettings(
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'pallas.db'}",
        pallas_config_dir=tmp_path / "config",
        pallas_state_url=server.url,
        pallas_state_prefix=_prefix(),
    )
    with caplog.at_level(logging.WARNING, logger="pallas"):
        rt = await PallasRuntime.start(settings)
    # shared state on a one-process database: the operator is told at start-up
    assert any("SQLite serves one process" in r.message for r in caplog.records)
    try:
        assert isinstance(rt.state, RedisStateStore) and rt.owns_state
        await rt.state.set("k", 1)
        assert await rt.state.get("k") == 1
    finally:
        await rt.stop()


async def test_the_runtime_refuses_to_start_on_an_unreachable_redis(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("pallas.core.state_redis.STARTUP_WAIT_S", 0.3)
    settings = PallasSettings(
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'pallas.db'}",
        pallas_state_url="redis://127.0.0.1:1/0",
    )
    with pytest.raises(StateUnavailableError):
        await PallasRuntime.start(settings, base_dir=tmp_path)  # fails before the database
    assert not (tmp_path / "pallas.db").exists()


# -- routing over one Redis, two processes ------------------------------------------------------


def _engines(pair: tuple[RedisStateStore, RedisStateStore]) -> tuple[Router, Router]:
    return Router(pair[0]), Router(pair[1])


async def _route(
    engine: Router, text: str, now: float, config: RoutingConfig = QUIET, **kwargs: object
) -> RouteResult:
    t = turn(text, time=now, **kwargs)  # type: ignore[arg-type]
    return await engine.route(t, config, aliases=ALIASES, now=now, rng=random.Random(3))


async def test_a_message_delivered_to_two_processes_is_routed_once(pair) -> None:
    a, b = _engines(pair)
    now = time.time()
    results = await asyncio.gather(
        _route(a, "你好呀", now, at_bot=True, message_id=501),
        _route(b, "你好呀", now, at_bot=True, message_id=501),
    )
    assert sorted(r.reason == "duplicate" for r in results) == [False, True]
    assert sum(r.calls_llm for r in results) == 1


async def test_a_members_in_flight_turn_is_shared_between_processes(pair) -> None:
    a, b = _engines(pair)
    now = time.time()
    first = await _route(a, "帮我看看这个报错", now, at_bot=True, message_id=601)
    assert first.calls_llm
    assert await b.in_flight_count(BOT, GROUP) == 1
    second = await _route(b, "就是那个404的", now + 1, at_bot=True, message_id=602)
    assert (second.outcome, second.reason) == (RouteOutcome.MERGE, "user_in_flight")
    await a.record_bot_reply(BOT, GROUP, ALICE, [9601], now + 2)
    assert await b.in_flight_count(BOT, GROUP) == 0
    third = await _route(b, "那这个呢", now + 10, at_bot=True, message_id=603)
    assert third.calls_llm


async def test_two_processes_racing_one_member_start_one_llm_turn(pair) -> None:
    a, b = _engines(pair)
    now = time.time()
    results = await asyncio.gather(
        _route(a, "帮我看看这个报错", now, at_bot=True, message_id=701),
        _route(b, "就是那个404的", now, at_bot=True, message_id=702),
    )
    assert sorted(r.outcome.value for r in results) == ["merge", "reply"]


async def _route_after(engine: Router, wait: float, text: str, now: float, **kw: object):
    await asyncio.sleep(wait)
    return await _route(engine, text, now, **kw)


async def test_two_members_ats_in_two_processes_are_both_answered_at_once(pair) -> None:
    """An @ the cooldown does not hold (the default) is not held by the race for its slot:
    answered at once however the two routes interleave (it once depended on the timing)."""
    a, b = _engines(pair)
    for round_, delay in enumerate((0.0, 0.0, 0.01)):
        now = time.time() + 100 * round_  # past the previous round's cooldown
        results = await asyncio.gather(
            _route_after(a, 0.0, "帮我看看这个报错", now, at_bot=True, message_id=810 + 2 * round_,
                         user=ALICE),
            _route_after(b, delay, "我也想问一个问题", now, at_bot=True,
                         message_id=811 + 2 * round_, user=BOB),
        )  # fmt: skip
        assert [r.outcome.value for r in results] == ["reply", "reply"], round_
        for result in results:
            await a.record_bot_reply(BOT, GROUP, result.turn.user_id, [9800 + round_], now + 1)


async def test_two_processes_racing_the_group_cooldown_start_one_llm_turn(pair) -> None:
    """With `addressed_waits_cooldown`, of two @s at once one is held, however they interleave."""
    a, b = _engines(pair)
    now = time.time()
    results = await asyncio.gather(
        _route(a, "帮我看看这个报错", now, WAITING, at_bot=True, message_id=801, user=ALICE),
        _route(b, "我也想问一个问题", now, WAITING, at_bot=True, message_id=802, user=BOB),
    )
    assert sorted(r.outcome.value for r in results) == ["accumulate", "reply"]
    held = next(r for r in results if r.outcome is RouteOutcome.ACCUMULATE)
    assert held.cooldown is not None and held.cooldown.retry_after_s > 0  # an @ is retried
    assert await a.in_flight_count(BOT, GROUP) == 1
    # kept for the next turn: still pending, or already drained into the winner's turn
    winner = next(r for r in results if r.calls_llm)
    kept = [p["message_id"] for p in await b.pending(BOT, GROUP)]
    kept += [p["message_id"] for p in winner.accumulated]
    assert kept == [held.turn.message_id]
