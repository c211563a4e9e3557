"""pallas.onebot.neighbours: which other plugin took a line, and which sent a message."""

from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace
from typing import Any

from nonebot.matcher import current_event, current_matcher

from pallas.onebot.detached import DetachedTurns
from pallas.onebot.lanes import Lanes
from pallas.onebot.neighbours import Neighbours, plugin_of, sending_plugin, takes_line
from pallas.routing.outcome_text import reason_zh


def matcher(module: str | None, *, block: bool = False, rule: bool = True) -> Any:
    plugin = None if module is None else SimpleNamespace(module_name=module, id_=module)
    return SimpleNamespace(
        plugin=plugin, block=block, rule=SimpleNamespace(checkers={object()} if rule else set())
    )


def test_own_plugins_and_pallas_entry_are_not_neighbours() -> None:
    assert plugin_of(matcher(None)) is None  # Pallas's one entry: created outside a plugin
    assert plugin_of(matcher("packages.pallas_admin")) is None
    assert plugin_of(matcher("nonebot_plugin_roll")) == "nonebot_plugin_roll"
    assert plugin_of(None) is None


def test_a_block_with_a_rule_takes_the_line_an_observer_never_does() -> None:
    assert takes_line(matcher("x", block=True))
    assert not takes_line(matcher("x", block=False))
    assert not takes_line(matcher("x", block=True, rule=False))  # on_message() recorder


async def test_an_observer_that_ran_leaves_the_line_to_pallas() -> None:
    neighbours, event = Neighbours(wait_s=1.0), object()
    watch = neighbours.watch(event)
    neighbours.matcher_ran(matcher("stats", block=True, rule=False), event)
    neighbours.matcher_ran(matcher("repeater", block=False), event)
    neighbours.dispatched(event)
    assert await watch.settled() is None


async def test_a_blocking_command_of_another_plugin_is_the_verdict() -> None:
    neighbours, event = Neighbours(wait_s=1.0), object()
    watch = neighbours.watch(event)
    neighbours.matcher_ran(matcher("nonebot_plugin_status", block=True), event)
    assert watch.known() == "nonebot_plugin_status"
    assert await watch.settled() == "nonebot_plugin_status"


async def test_a_send_inside_another_plugins_matcher_is_the_verdict_and_its_name() -> None:
    neighbours, event = Neighbours(wait_s=1.0), object()
    watch = neighbours.watch(event)
    m_token = current_matcher.set(matcher("nonebot_plugin_roll"))
    e_token = current_event.set(event)  # type: ignore[arg-type]
    try:
        assert sending_plugin() == "nonebot_plugin_roll"
        neighbours.api_calling("get_msg")  # not a send
        assert watch.known() is None
        neighbours.api_calling("send_group_msg")
    finally:
        current_event.reset(e_token)
        current_matcher.reset(m_token)
    assert watch.known() == "nonebot_plugin_roll"
    assert sending_plugin() is None  # no matcher: Pallas's own (a scheduled job)


async def test_the_wait_is_bounded_and_lets_frames_be_read() -> None:
    lanes = Lanes(hold_max_s=5.0)
    hold = lanes.hold()
    assert lanes.reading_paused
    neighbours, event = Neighbours(wait_s=0.2), object()
    watch = neighbours.watch(event)
    started = time.monotonic()
    waiting = asyncio.create_task(watch.settled(hold))
    await asyncio.sleep(0.01)
    assert lanes.reading_paused  # the dispatch's usual end: waited for with the loop held
    await asyncio.sleep(0.08)
    assert not lanes.reading_paused  # a slow plugin: waiting is not work, reading goes on
    assert await waiting is None
    assert 0.15 < time.monotonic() - started < 1.0
    assert lanes.reading_paused  # the @ still prepares its request afterwards
    hold.release()


async def test_the_end_of_the_dispatch_ends_the_wait_at_once() -> None:
    neighbours, event = Neighbours(wait_s=5.0), object()
    watch = neighbours.watch(event)
    waiting = asyncio.create_task(watch.settled())
    await asyncio.sleep(0)
    neighbours.dispatched(event)
    assert await asyncio.wait_for(waiting, 1.0) is None


async def test_an_adopted_hold_outlives_the_handling_until_the_turn_releases_it() -> None:
    lanes = Lanes(hold_max_s=5.0)
    hold = lanes.hold()
    hold.adopt()
    assert lanes.holding
    hold.release()
    assert not lanes.holding


async def test_detached_turns_log_a_failure_once_and_drain() -> None:
    turns = DetachedTurns()

    async def boom() -> None:
        raise RuntimeError("bug")

    async def slow() -> None:
        await asyncio.sleep(10)

    turns.spawn(boom(), "boom")
    slow_task = turns.spawn(slow(), "slow")
    await asyncio.sleep(0.01)
    assert len(turns) == 1
    await turns.drain(within_s=0.05)
    assert slow_task.cancelled()


def test_why_names_the_plugin_in_chinese() -> None:
    assert reason_zh("plugin", "handled_by_plugin:nonebot_plugin_roll") == (
        "其他插件：由插件 nonebot_plugin_roll 处理"
    )


def test_only_other_plugins_with_matchers_are_waited_for() -> None:
    from pallas.onebot.neighbours import answering_plugins

    plugins = [
        SimpleNamespace(module_name="packages.llm_chat", id_="llm_chat", matcher={object()}),
        SimpleNamespace(module_name="nonebot_plugin_apscheduler", id_="sched", matcher=set()),
        SimpleNamespace(module_name="nonebot_plugin_roll", id_="roll", matcher={object()}),
    ]
    assert answering_plugins(plugins) == ["roll"]
    assert answering_plugins(plugins[:2]) == []  # Pallas alone: an @ waits for nothing
