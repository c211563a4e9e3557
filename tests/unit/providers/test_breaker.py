"""An endpoint's breaker: closed → open after N failures → probe after T → closed or open."""

from __future__ import annotations

from pallas.core.clock import FakeClock
from pallas.core.state import MemoryStateStore
from pallas.providers.breaker import (
    Breakers,
    BreakerState,
    after_failure,
    after_success,
    check,
    state_label,
)
from pallas.providers.endpoints import BreakerConfig

CONFIG = BreakerConfig(failures=3, open_seconds=60)


def test_transitions() -> None:
    state = BreakerState()
    assert check(state, 0).reason == "closed"
    for t in (1, 2):
        state = after_failure(state, t, CONFIG, "server_error")
        assert check(state, t).allowed, "two failures in a row still let calls through"
    state = after_failure(state, 3, CONFIG, "server_error")
    assert (check(state, 10).allowed, check(state, 10).reason) == (False, "open")
    assert check(state, 63).reason == "probe"
    reopened = after_failure(state, 63, CONFIG, "timeout")  # the probe failed
    assert check(reopened, 64).reason == "open" and reopened.open_until == 123
    closed = after_success(state, 63)
    assert check(closed, 64).reason == "closed" and closed.failures == 0


def test_labels_read_in_chinese() -> None:
    opened = after_failure(BreakerState(failures=2), 0, CONFIG, "server_error")
    assert state_label(opened, 30) == "熔断中（31 秒后重试）"
    assert state_label(opened, 61) == "待探测（下一次调用试一下）"
    assert state_label(BreakerState(failures=1), 0) == "正常（连续失败 1 次）"
    assert state_label(BreakerState(), 0) == "正常"


def test_garbage_state_reads_as_closed() -> None:
    assert BreakerState.from_json({"failures": "x"}) == BreakerState()
    assert BreakerState.from_json("nope") == BreakerState()


async def test_state_is_shared_through_the_store() -> None:
    clock = FakeClock()
    store = MemoryStateStore(clock)
    one, other = Breakers(store, CONFIG), Breakers(store, CONFIG)  # two processes, one Redis
    for _ in range(3):
        await one.record("chat", "primary", False, clock.now(), "server_error")
    assert check(await other.get("chat", "primary"), clock.now()).reason == "open"
    assert check(await other.get("cheap", "primary"), clock.now()).reason == "closed"
