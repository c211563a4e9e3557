from pallas.core.clock import FakeClock
from pallas.core.state import SWEEP_EVERY_S, MemoryStateStore


async def test_ttl_expiry_on_injected_clock(clock: FakeClock) -> None:
    store = MemoryStateStore(clock)
    await store.set("k", {"a": 1}, ttl=10)
    clock.advance(9.9)
    assert await store.get("k") == {"a": 1}
    clock.advance(0.2)
    assert await store.get("k") is None


async def test_values_are_copied_not_shared(clock: FakeClock) -> None:
    store = MemoryStateStore(clock)
    value = {"list": [1]}
    await store.set("k", value)
    value["list"].append(2)
    got = await store.get("k")
    got["list"].append(3)
    assert await store.get("k") == {"list": [1]}


async def test_bounded_list_drops_oldest(clock: FakeClock) -> None:
    store = MemoryStateStore(clock)
    for i in range(8):
        await store.push("cands", i, maxlen=6)
    assert await store.items("cands") == [2, 3, 4, 5, 6, 7]


async def test_set_if_absent_claims_once_until_expiry(clock: FakeClock) -> None:
    store = MemoryStateStore(clock)
    assert await store.set_if_absent("lock", 1, ttl=5)
    assert not await store.set_if_absent("lock", 2, ttl=5)
    clock.advance(6)
    assert await store.set_if_absent("lock", 3, ttl=5)


async def test_incr_and_prefix_keys(clock: FakeClock) -> None:
    store = MemoryStateStore(clock)
    assert await store.incr("c:1") == 1
    assert await store.incr("c:1", 2) == 3
    await store.set("c:2", 0, ttl=1)
    clock.advance(2)
    assert await store.keys("c:") == ["c:1"]


async def test_max_keys_bounds_memory(clock: FakeClock) -> None:
    store = MemoryStateStore(clock, max_keys=100)
    for i in range(250):
        await store.set(f"k{i}", i)
    assert len(await store.keys("k")) <= 100
    assert await store.get("k249") == 249


async def test_expired_keys_nobody_reads_again_are_swept_by_a_later_write(
    clock: FakeClock,
) -> None:
    """Issue 33's soak: each message's dedupe claim (a TTL key never read again) stayed until
    the 200,000-key bound, ~1.4 MB per busy hour. A write 5 minutes on sweeps them."""
    store = MemoryStateStore(clock)
    for i in range(1_000):
        await store.set(f"seen:{i}", 1, ttl=60)
    await store.set("keep", 1)
    clock.advance(SWEEP_EVERY_S)
    await store.set("next", 1)
    assert len(store._data) == 2  # the expired claims are gone, not just invisible
    assert await store.get("keep") == 1


async def test_full_store_evicts_expired_first_then_oldest_with_headroom(
    clock: FakeClock,
) -> None:
    store = MemoryStateStore(clock, max_keys=100)
    for i in range(50):
        await store.set(f"old{i}", i, ttl=10)
    for i in range(50):
        await store.set(f"keep{i}", i)
    clock.advance(11)  # the "old" keys are expired but still held
    await store.set("new", 1)  # 101 keys: one sweep
    assert await store.keys("old") == []
    assert len(await store.keys("keep")) == 50 and await store.get("new") == 1
    for i in range(50):
        await store.set(f"more{i}", i)  # over the bound again: the oldest "keep" keys go
    keys = await store.keys("")
    assert len(keys) == 90 and "more49" in keys and "keep10" not in keys  # 10 % headroom
