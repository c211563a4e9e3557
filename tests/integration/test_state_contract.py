"""One table of StateStore behaviours, run over `MemoryStateStore` and `RedisStateStore`.

The `backend` fixture hides the differences: `open(prefix)` gives a store over the shared data
(for Redis a new client, i.e. another process; for memory the one in-process store of that
prefix), `elapse(s)` lets TTLs run (a FakeClock for memory, real time for Redis, so Redis TTLs
here are about a second). Redis needs `redis-server` (see tests/harness/redis_server.py);
without it the Redis half is skipped with the reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

from pallas.core.clock import FakeClock
from pallas.core.state import MemoryStateStore, StateStore
from tests.harness.redis_server import RedisServer

TTL = 1.0  # seconds; a Redis round trip on a loaded 2-core CI machine stays well inside it


@dataclass
class Backend:
    name: str
    open: Callable[..., StateStore]
    elapse: Callable[[float], Awaitable[None]]
    closers: list[Callable[[], Awaitable[None]]] = field(default_factory=list)

    @property
    def store(self) -> StateStore:
        return self.open()


@pytest.fixture(params=["memory", "redis"])
async def backend(request: pytest.FixtureRequest) -> AsyncIterator[Backend]:
    if request.param == "memory":
        clock = FakeClock()
        stores: dict[str, MemoryStateStore] = {}

        def open_memory(prefix: str = "") -> StateStore:
            return stores.setdefault(prefix, MemoryStateStore(clock))

        async def advance(seconds: float) -> None:
            clock.advance(seconds)

        yield Backend("memory", open_memory, advance)
        return

    server: RedisServer = request.getfixturevalue("redis_server")
    from pallas.core.state_redis import RedisStateStore

    run = f"t{uuid.uuid4().hex[:10]}"  # each test its own namespace in the module's server
    first: dict[str, RedisStateStore] = {}
    opened: list[RedisStateStore] = []

    def open_redis(prefix: str = "", *, new_client: bool = False) -> StateStore:
        if prefix in first and not new_client:
            return first[prefix]
        # generous timeouts: on a loaded 2-core machine, 100 parallel claims open up to 64
        # connections at once, and the default 0.5 s connect timeout turned some into errors
        store = RedisStateStore.from_url(
            server.url, prefix=f"{run}{prefix}", socket_timeout=5.0, connect_timeout=5.0
        )
        opened.append(store)
        first.setdefault(prefix, store)
        return store

    backend = Backend("redis", open_redis, asyncio.sleep)
    yield backend
    for store in opened:
        await store.aclose()


def other_process(backend: Backend) -> StateStore:
    """A second client over the same data (memory: the same store, one process)."""
    if backend.name == "redis":
        return backend.open(new_client=True)
    return backend.store


# -- values -----------------------------------------------------------------------------------

VALUES = [
    {"nested": {"list": [1, 2.5, None, True, "x"], "empty": {}}, "n": -3},
    '牛牛🐮 你好\n"quoted" \\ back\tslash \u200b',
    2**70,
    -(2**63),
    0.1,
    1_760_000_000.123456,
    [],
    [[1, 2], {"a": [3]}],
    "",
    False,
    0,
]


@pytest.mark.parametrize("value", VALUES, ids=range(len(VALUES)))
async def test_json_values_round_trip(backend: Backend, value: object) -> None:
    store = backend.store
    await store.set("k", value)
    assert await store.get("k") == value
    assert await other_process(backend).get("k") == value


async def test_missing_keys_and_delete(backend: Backend) -> None:
    store = backend.store
    assert await store.get("nope") is None
    assert await store.items("nope") == []
    assert await store.take("nope") == []
    await store.delete("nope")  # no error
    await store.set("k", {"a": 1})
    await other_process(backend).delete("k")
    assert await store.get("k") is None


async def test_returned_values_are_copies(backend: Backend) -> None:
    store = backend.store
    await store.set("k", {"list": [1]})
    got = await store.get("k")
    got["list"].append(2)
    await store.push("l", {"a": 1}, maxlen=3)
    (item,) = await store.items("l")
    item["a"] = 2
    assert await store.get("k") == {"list": [1]}
    assert await store.items("l") == [{"a": 1}]


# -- TTLs -------------------------------------------------------------------------------------


async def test_read_answers_as_get_and_items_do(backend: Backend) -> None:
    store = backend.store
    await store.set("v", {"a": [1]})
    await store.set("n", 3)
    await store.push("l", 1, maxlen=3)
    await store.push("l", {"b": 2}, maxlen=3)
    await store.set("gone", 1, ttl=TTL)
    await backend.elapse(TTL * 1.5)
    names, lists = ["v", "missing", "l", "n", "gone"], ["l", "missing", "v"]
    values, listed = await other_process(backend).read(names, lists)
    assert _plain(values) == [{"a": [1]}, None, [1, {"b": 2}], 3, None]
    assert _plain(values) == [await store.get(k) for k in names]
    assert _plain(listed) == [[1, {"b": 2}], [], []]
    assert _plain(listed) == [await store.items(k) for k in lists]
    assert await store.read([], []) == ([], [])
    assert isinstance(values[0], Mapping) and isinstance(listed[0][1], Mapping)


async def test_read_values_cannot_change_the_store(backend: Backend) -> None:
    """`read` hands out read-only views (the memory store's own frozen values): changing one
    fails or changes a private copy, never what the next reader sees."""
    store = backend.store
    await store.set("v", {"a": [1], "b": {"c": 2}})
    await store.push("l", {"b": 2}, maxlen=3)
    (value,), (items,) = await store.read(["v"], ["l"])
    attempts: list[Callable[[], object]] = [
        lambda: value["a"].append(2),
        lambda: value.__setitem__("z", 1),
        lambda: value["b"].__setitem__("c", 3),
        lambda: items[0].__setitem__("b", 3),
    ]
    for attempt in attempts:
        with contextlib.suppress(TypeError, AttributeError):
            attempt()
    assert _plain(await store.read(["v"], ["l"])) == [[{"a": [1], "b": {"c": 2}}], [[{"b": 2}]]]
    assert await store.get("v") == {"a": [1], "b": {"c": 2}}
    got = await store.get("v")  # get thaws a private copy: a plain dict to change freely
    got["a"].append(2)
    assert await store.get("v") == {"a": [1], "b": {"c": 2}}


def _plain(value: Any) -> Any:
    """A read-only view as plain JSON values (mappings as dicts, sequences as lists)."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


async def test_ttl_expiry(backend: Backend) -> None:
    store = backend.store
    await store.set("short", "v", ttl=TTL)
    await store.set("forever", "v")
    await backend.elapse(TTL / 3)
    assert await store.get("short") == "v"
    await backend.elapse(TTL)
    assert await store.get("short") is None
    assert await store.get("forever") == "v"
    assert await store.keys("") == ["forever"]


async def test_set_without_ttl_clears_the_old_ttl(backend: Backend) -> None:
    store = backend.store
    await store.set("k", 1, ttl=TTL)
    await store.set("k", 2)
    await backend.elapse(TTL * 1.5)
    assert await store.get("k") == 2


async def test_set_if_absent_claims_once_until_expiry(backend: Backend) -> None:
    store, other = backend.store, other_process(backend)
    assert await store.set_if_absent("lock", {"owner": 1}, ttl=TTL)
    assert not await other.set_if_absent("lock", {"owner": 2}, ttl=TTL)
    assert await other.get("lock") == {"owner": 1}
    await backend.elapse(TTL * 1.5)
    assert await other.set_if_absent("lock", {"owner": 3}, ttl=TTL)
    assert await store.get("lock") == {"owner": 3}
    await store.delete("lock")
    assert await store.set_if_absent("lock", 4)  # no TTL: held until deleted


async def test_incr_ttl_applies_only_when_the_counter_is_created(backend: Backend) -> None:
    store = backend.store
    assert await store.incr("c", ttl=TTL * 2) == 1
    await backend.elapse(TTL)
    assert await store.incr("c", ttl=TTL * 2) == 2  # does not extend the counter's life
    await backend.elapse(TTL * 1.5)
    assert await store.get("c") is None
    assert await store.incr("c", 5) == 5


async def test_push_ttl_is_refreshed_by_each_push_that_gives_one(backend: Backend) -> None:
    store = backend.store
    await store.push("l", 1, maxlen=5, ttl=TTL * 2)
    await backend.elapse(TTL)
    await store.push("l", 2, maxlen=5, ttl=TTL * 2)
    await backend.elapse(TTL)
    assert await store.items("l") == [1, 2]  # alive: the second push extended it
    await store.push("l", 3, maxlen=5)  # no ttl: keeps the current expiry
    await backend.elapse(TTL * 1.5)
    assert await store.items("l") == []


# -- counters ---------------------------------------------------------------------------------


async def test_incr_counts_from_zero_and_on_a_set_integer(backend: Backend) -> None:
    store = backend.store
    assert await store.incr("c") == 1
    assert await store.incr("c", 2) == 3
    assert await store.incr("c", -5) == -2
    assert await store.get("c") == -2
    await store.set("c", 0)
    assert await store.incr("c") == 1
    assert await store.incr("fresh", 0) == 0


async def test_concurrent_incr_from_two_processes_loses_nothing(backend: Backend) -> None:
    a, b = backend.store, other_process(backend)
    results = await asyncio.gather(*(((a, b)[i % 2]).incr("hits", ttl=60) for i in range(200)))
    assert sorted(results) == list(range(1, 201))
    assert await a.get("hits") == 200


# -- claims -----------------------------------------------------------------------------------


async def test_one_hundred_concurrent_claims_have_exactly_one_winner(backend: Backend) -> None:
    a, b = backend.store, other_process(backend)
    wins = await asyncio.gather(
        *(((a, b)[i % 2]).set_if_absent("claim", i, ttl=60) for i in range(100))
    )
    assert wins.count(True) == 1
    assert await a.get("claim") == wins.index(True)


async def test_compare_and_set_writes_only_over_the_value_read(backend: Backend) -> None:
    store, other = backend.store, other_process(backend)
    assert not await store.compare_and_set("b", {"tokens": 1}, {"tokens": 0})  # missing
    assert await store.compare_and_set("b", None, {"tokens": 2.5, "t": "牛"}, ttl=TTL)
    assert not await other.compare_and_set("b", None, {"tokens": 9})  # no longer missing
    seen = await other.get("b")
    assert await other.compare_and_set("b", seen, {"tokens": 1.5, "t": "牛"}, ttl=TTL)
    assert not await store.compare_and_set("b", seen, {"tokens": 0})  # changed since read
    assert await store.get("b") == {"tokens": 1.5, "t": "牛"}
    await store.push("l", 1, maxlen=3)
    assert not await store.compare_and_set("l", [1], 2)  # a list is not a value
    await backend.elapse(TTL * 1.5)
    assert await store.compare_and_set("b", None, 1)  # expired counts as missing


async def test_concurrent_read_modify_writes_lose_nothing(backend: Backend) -> None:
    a, b = backend.store, other_process(backend)

    async def add_one(store: StateStore) -> None:
        while True:
            seen = await store.get("n")
            if await store.compare_and_set("n", seen, {"n": (seen or {"n": 0})["n"] + 1}):
                return

    await asyncio.gather(*(add_one((a, b)[i % 2]) for i in range(40)))
    assert await a.get("n") == {"n": 40}


# -- bounded lists ----------------------------------------------------------------------------


async def test_push_keeps_the_newest_in_order(backend: Backend) -> None:
    store = backend.store
    for i in range(8):
        await store.push("cands", i, maxlen=6)
    assert await store.items("cands") == [2, 3, 4, 5, 6, 7]
    assert await store.get("cands") == [2, 3, 4, 5, 6, 7]  # a list reads as a list
    await store.push("cands", 8, maxlen=3)  # a smaller bound keeps the newest
    assert await store.items("cands") == [6, 7, 8]


async def test_push_and_set_replace_each_other(backend: Backend) -> None:
    store = backend.store
    await store.set("k", "plain")
    assert await store.items("k") == []  # a plain value is not a list
    await store.push("k", 1, maxlen=3)
    assert await store.items("k") == [1]
    await store.set("k", {"a": 1})
    assert await store.get("k") == {"a": 1}


async def test_concurrent_pushes_stay_bounded(backend: Backend) -> None:
    a, b = backend.store, other_process(backend)
    await asyncio.gather(*(((a, b)[i % 2]).push("l", i, maxlen=10, ttl=60) for i in range(60)))
    items = await a.items("l")
    assert len(items) == 10 and len(set(items)) == 10


async def test_take_drains_atomically_under_concurrent_pushes(backend: Backend) -> None:
    a, b = backend.store, other_process(backend)
    taken: list[int] = []

    async def pusher() -> None:
        for i in range(100):
            await a.push("parked", i, maxlen=1000, ttl=60)

    async def drainer() -> None:
        for _ in range(30):
            taken.extend(await b.take("parked"))
            await asyncio.sleep(0)

    await asyncio.gather(pusher(), drainer())
    taken.extend(await b.take("parked"))
    assert sorted(taken) == list(range(100))  # none lost, none twice
    assert await a.items("parked") == []
    await a.set("plain", 1)
    assert await a.take("plain") == [] and await a.get("plain") is None


# -- keys and namespaces ----------------------------------------------------------------------


async def test_keys_by_prefix_sorted_with_glob_characters(backend: Backend) -> None:
    store = backend.store
    names = ["a*b:2", "a*b:1", "axb:3", "a?c", "[x]:1", "x:1", "a\\b", "群:牛牛", "a*b:exp"]
    for name in names:
        await store.set(name, 1, ttl=TTL if name.endswith("exp") else None)
    await store.push("a*b:list", 1, maxlen=3)
    await backend.elapse(TTL * 1.5)
    assert await store.keys("a*b:") == ["a*b:1", "a*b:2", "a*b:list"]
    assert await store.keys("a?") == ["a?c"]
    assert await store.keys("[x]") == ["[x]:1"]
    assert await store.keys("a\\") == ["a\\b"]
    assert await store.keys("群:") == ["群:牛牛"]
    assert await store.keys("") == sorted([*(n for n in names if n != "a*b:exp"), "a*b:list"])
    assert await store.keys("nothing") == []


async def test_prefixes_do_not_see_each_other(backend: Backend) -> None:
    one, two = backend.open("one"), backend.open("two")
    await one.set("route:1:g2:last_turn_at", 1.0)
    await two.set("route:1:g2:last_turn_at", 2.0)
    await one.push("route:1:g2:pending", "a", maxlen=3)
    assert await one.get("route:1:g2:last_turn_at") == 1.0
    assert await two.get("route:1:g2:last_turn_at") == 2.0
    assert await two.items("route:1:g2:pending") == []
    assert await one.keys("") == ["route:1:g2:last_turn_at", "route:1:g2:pending"]
    assert await two.keys("route:") == ["route:1:g2:last_turn_at"]
    assert await two.set_if_absent("route:1:g2:pending", "x")


# -- cost guard counters (pallas.features.cost) --------------------------------------------


class _Ledger:
    """Today's ledger totals as the usage repository returns them (seeding source)."""

    def __init__(self, calls: int, tokens: int) -> None:
        self.calls, self.tokens, self.queries = calls, tokens, 0

    async def totals(self, **_: object) -> object:
        from pallas.core.db.repositories.usage import UsageTotals

        self.queries += 1
        return UsageTotals(calls=self.calls, prompt_tokens=self.tokens)


COST_NOW = 1_760_000_000.0


async def test_cost_counters_add_up_across_processes_and_seed_once(backend: Backend) -> None:
    from pallas.features.cost.counters import UsageCounters

    ledger = _Ledger(calls=5, tokens=500)
    a = UsageCounters(backend.store, ledger)  # type: ignore[arg-type]
    b = UsageCounters(other_process(backend), ledger)  # type: ignore[arg-type]
    await asyncio.gather(
        *(
            ((a, b)[i % 2]).record(COST_NOW, 2, "vision" if i % 5 == 0 else "chat", 10)
            for i in range(40)
        )
    )
    seen_a, seen_b = await a.today(COST_NOW, 2), await b.today(COST_NOW, 2)
    assert seen_a == seen_b
    assert (seen_a.chat.calls, seen_a.chat.tokens) == (5 + 32, 500 + 320)
    assert (seen_a.vision.calls, seen_a.vision.tokens) == (8, 80)
    assert seen_a.deployment.calls == 45
    assert ledger.queries == 2  # the group and the deployment scope, seeded once each
    other_group = await a.today(COST_NOW, 3)
    assert other_group.chat.calls == 5 and other_group.deployment.calls == 45
    tomorrow = await a.today(COST_NOW + 86_400, 2)
    assert tomorrow.chat.calls == 5  # a new day is seeded from that day's ledger, not carried


async def test_cost_once_today_and_limit_hits_are_shared(backend: Backend) -> None:
    from pallas.features.cost.counters import UsageCounters

    a, b = UsageCounters(backend.store), UsageCounters(other_process(backend))
    wins = await asyncio.gather(
        *(((a, b)[i % 2]).once_today(COST_NOW, "warn:x") for i in range(20))
    )
    assert wins.count(True) == 1
    for user in (7, 8, 7):
        await b.note_limited(COST_NOW, 2, user)
    assert await a.limited_today(COST_NOW, 2) == (3, [7, 8])
    await b.add_notice(COST_NOW, "全部群今日回复总量已达部署上限")
    assert await a.notices(COST_NOW) == ["全部群今日回复总量已达部署上限"]


async def test_cost_member_bucket_holds_across_processes_and_accounts(backend: Backend) -> None:
    """One member's bucket in a group, whichever process and whichever account answers."""
    import random
    from dataclasses import replace

    from pallas.config import GroupConfig
    from pallas.core.turn import TurnInput
    from pallas.features.cost.counters import UsageCounters
    from pallas.features.cost.guard import CostGuard
    from pallas.routing.evaluate import duplicate_result
    from pallas.routing.triggers import TriggerKind

    config = GroupConfig.model_validate({"cost": {"member": {"burst": 2}}})
    guards = [
        CostGuard(UsageCounters(store), rng=random.Random(1))
        for store in (backend.store, other_process(backend))
    ]
    turn = TurnInput(bot_id=1, group_id=2, user_id=3, message_id=4, time=COST_NOW, text="在吗")
    base = duplicate_result(turn, COST_NOW)
    route = replace(base, trigger=replace(base.trigger, kind=TriggerKind.AT, addressed=True))
    turns = [turn, replace(turn, bot_id=5)]  # a second account of the deployment
    actions = [
        (await guards[i % 2].check(turns[i // 2], route, config, COST_NOW)).action for i in range(4)
    ]
    assert actions == ["proceed", "proceed", "phrase", "drop"]
