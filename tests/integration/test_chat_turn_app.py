"""ChatTurnService in-process: built by the composition root over fakes, one test per branch.

The fake clock, the memory StateStore and the fake OpenAI server stand in for time, Redis and
the model; the sender records what the group would see. No test waits on the real clock except
the merge test, which waits for the in-flight turn's LLM request to arrive (a condition).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from pallas.app import PallasApp
from pallas.core import state_keys
from pallas.core.clock import DAY_S, FakeClock, local_day
from pallas.core.db import migrate
from pallas.core.db.engine import create_engine, session_factory
from pallas.core.db.repositories.usage import UsageEntry, UsageRepository
from tests.harness.fake_openai import FakeOpenAI, Scripted
from tests.integration.chat_app import (
    BOB,
    BOT,
    GROUP,
    T0,
    ClockSleep,
    RecordingSender,
    group_turn,
    start_chat_app,
)

ALWAYS_PHRASE = """
[routing.low_engagement]
probability_steps = [[0, 1.0]]
use_group_expressions = false
"""

# The older behaviour, still configurable: an @ during the group cooldown waits it out.
AT_WAITS_COOLDOWN = """
[routing.cooldown]
addressed_waits_cooldown = true
"""

ONE_TURN_PER_MEMBER = """
[cost.member]
enabled = true
burst = 1
turns = 1
window_s = 3600
"""


@pytest.fixture
async def fake_llm() -> AsyncIterator[FakeOpenAI]:
    server = FakeOpenAI(default_reply="好哦", in_process=True)
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(T0)


class Bot:
    def __init__(self, app: PallasApp, sleep: ClockSleep, clock: FakeClock) -> None:
        self.app, self.sleep, self.clock = app, sleep, clock
        self.sender = RecordingSender()


@pytest.fixture
async def make_bot(tmp_path: Path, fake_llm: FakeOpenAI, clock: FakeClock) -> AsyncIterator[object]:
    apps: list[PallasApp] = []

    async def make(group_toml: str = "", *, api_key: bool = True) -> Bot:
        app, sleep = await start_chat_app(
            tmp_path, fake_llm, clock, group_toml=group_toml, api_key=api_key
        )
        apps.append(app)
        return Bot(app, sleep, clock)

    yield make
    for app in apps:
        await app.stop()


async def test_an_addressed_question_gets_one_llm_reply_delivered_and_remembered(
    make_bot, fake_llm: FakeOpenAI, clock: FakeClock
) -> None:
    bot = await make_bot()
    outcome = await bot.app.chat.handle(
        group_turn("明天几点开会？", clock, at_bot=True), bot.sender
    )
    assert outcome.outcome == "delivered"
    assert bot.sender.texts() == ["好哦"]
    assert len(fake_llm.chat_requests()) == 1
    assert outcome.turn_id is not None
    snapshot = await bot.app.runtime.repos.snapshots.by_turn(outcome.turn_id)
    assert snapshot is not None and snapshot.outcome == "delivered"
    await bot.app.chat.drain_background()


async def test_a_failed_llm_call_sends_nothing_and_keeps_the_error_snapshot(
    make_bot, fake_llm: FakeOpenAI, clock: FakeClock
) -> None:
    bot = await make_bot()
    fake_llm.enqueue(Scripted(status=500))
    outcome = await bot.app.chat.handle(group_turn("在吗？", clock, at_bot=True), bot.sender)
    assert outcome.outcome == "error"
    assert bot.sender.sent == []
    assert outcome.turn_id is not None
    snapshot = await bot.app.runtime.repos.snapshots.by_turn(outcome.turn_id)
    assert snapshot is not None and snapshot.outcome.startswith("error:")
    # issue 28: the route log said reply / rule_reply; it now ends with the failure
    decisions = await bot.app.runtime.routing.recent_decisions(BOT, GROUP)
    last = decisions[-1]
    assert (last["outcome"], last["stage"], last["reason"]) == ("error", "llm", "server_error")
    failed = await bot.app.console_backend().failure_counts(clock.now())
    assert failed == {(BOT, GROUP): 1}


async def test_without_an_api_key_routing_runs_but_no_reply_is_made(
    make_bot, fake_llm: FakeOpenAI, clock: FakeClock
) -> None:
    bot = await make_bot(api_key=False)
    outcome = await bot.app.chat.handle(group_turn("在吗？", clock, at_bot=True), bot.sender)
    assert (outcome.outcome, outcome.reason) == ("disabled", "no_api_key")
    assert bot.sender.sent == [] and fake_llm.chat_requests() == []


async def test_a_low_value_mention_gets_a_local_pass_phrase_without_the_llm(
    make_bot, fake_llm: FakeOpenAI, clock: FakeClock
) -> None:
    bot = await make_bot(ALWAYS_PHRASE)
    outcome = await bot.app.chat.handle(group_turn("今天牛牛好可爱", clock), bot.sender)
    assert outcome.outcome == "pass_phrase"
    assert len(bot.sender.sent) == 1 and 0 < len(bot.sender.texts()[0]) <= 12
    assert fake_llm.chat_requests() == []


async def test_an_old_unaddressed_message_is_stale_and_not_routed(
    make_bot, fake_llm: FakeOpenAI, clock: FakeClock
) -> None:
    bot = await make_bot()
    outcome = await bot.app.chat.handle(group_turn("大家晚上吃什么", clock, age_s=600), bot.sender)
    assert (outcome.outcome, outcome.reason) == ("stale", "stale_message")
    assert bot.sender.sent == [] and fake_llm.chat_requests() == []


async def test_a_quick_follow_up_while_the_turn_is_in_flight_is_merged(
    make_bot, fake_llm: FakeOpenAI, clock: FakeClock
) -> None:
    bot = await make_bot()
    fake_llm.enqueue(Scripted(text="好哦", delay=0.5))  # holds the first turn in flight
    first = asyncio.create_task(
        bot.app.chat.handle(group_turn("明天几点开会？", clock, at_bot=True), bot.sender)
    )
    await fake_llm.wait_for_requests(1)
    second = await bot.app.chat.handle(group_turn("还有地点在哪", clock), bot.sender)
    assert second.outcome == "merge"
    assert (await first).outcome == "delivered"
    assert len(fake_llm.chat_requests()) == 1


async def test_an_address_in_the_cooldown_is_answered_at_once(
    make_bot, fake_llm: FakeOpenAI, clock: FakeClock
) -> None:
    bot = await make_bot()
    first = await bot.app.chat.handle(group_turn("明天几点开会？", clock, at_bot=True), bot.sender)
    assert first.outcome == "delivered"
    paused = len(bot.sleep.pauses)
    bob = group_turn("那地点呢？", clock, user=BOB, at_bot=True)
    second = await bot.app.chat.handle(bob, bot.sender)
    assert second.outcome == "delivered"
    assert len(fake_llm.chat_requests()) == 2
    assert not any(p >= 0.2 for p in bot.sleep.pauses[paused:]), "no cooldown was waited"
    decisions = await bot.app.runtime.routing.recent_decisions(BOT, GROUP)
    assert [d["outcome"] for d in decisions if d.get("message_id") == bob.message_id] == ["reply"]


async def test_an_address_in_the_cooldown_is_retried_when_it_ends(
    make_bot, fake_llm: FakeOpenAI, clock: FakeClock
) -> None:
    bot = await make_bot(AT_WAITS_COOLDOWN)
    first = await bot.app.chat.handle(group_turn("明天几点开会？", clock, at_bot=True), bot.sender)
    assert first.outcome == "delivered"
    paused = len(bot.sleep.pauses)
    bob = group_turn("那地点呢？", clock, user=BOB, at_bot=True)
    second = await bot.app.chat.handle(bob, bot.sender)
    assert second.outcome == "delivered"
    assert len(fake_llm.chat_requests()) == 2
    # routed again after waiting out the cooldown (a retry, not a second message)
    assert any(p >= 0.2 for p in bot.sleep.pauses[paused:])
    decisions = await bot.app.runtime.routing.recent_decisions(BOT, GROUP)
    assert [d["outcome"] for d in decisions if d.get("message_id") == bob.message_id] in (
        ["accumulate", "reply"],
        ["reply", "accumulate"],
    )


async def test_the_cost_guard_refuses_a_members_turn_over_the_rate_limit(
    make_bot, fake_llm: FakeOpenAI, clock: FakeClock
) -> None:
    bot = await make_bot(ONE_TURN_PER_MEMBER)
    first = await bot.app.chat.handle(group_turn("明天几点开会？", clock, at_bot=True), bot.sender)
    assert first.outcome == "delivered"
    clock.advance(90)  # past the cooldown, inside the member's window
    # answered, 90 s later, a new line: conversation, which takes no flood token
    second = await bot.app.chat.handle(group_turn("那地点呢？", clock, at_bot=True), bot.sender)
    assert second.outcome == "delivered"
    clock.advance(90)
    # the same line again is a repeat: the empty bucket refuses it
    third = await bot.app.chat.handle(group_turn("那地点呢？", clock, at_bot=True), bot.sender)
    assert third.outcome == "cost_limited" and third.reason.startswith("member_rate_limited")
    assert len(fake_llm.chat_requests()) == 2


async def test_the_app_builds_one_memory_service_for_chat_commands_and_console(
    make_bot,
) -> None:
    bot = await make_bot()
    app = bot.app
    memory_users = [app.turn_extras, *app.chat.recorder.hooks, *app.chat.prepare.sources]
    services = {id(user.service) for user in memory_users if hasattr(user, "service")}
    services.add(id(app.turn_extras.memory))
    assert len([u for u in memory_users if hasattr(u, "service")]) >= 4  # sources + hook
    assert services == {id(app.memory)}
    assert app.chat.prepare.stickers is app.stickers and app.chat.cost is app.cost
    # the chat turn's parts are built once by the composition root and shared by its steps
    chat = app.chat
    assert chat.route_step.merges is chat.merges is chat.prepare.merges
    assert chat.route_step.freshness is chat.admit.freshness
    assert chat.route_step.tools is chat.prepare.tools
    assert chat.call.cost is chat.cost and chat.admit.cost is chat.cost
    assert chat.prepare.extras is app.turn_extras is chat.extras
    assert chat.route_step.routing is chat.admit.routing is chat.deliver.routing is chat.routing
    # the admin commands and the web console use the app's own services, built once
    assert app.admin.memory is app.memory and app.admin.feedback is app.feedback
    assert app.admin.insight is app.insight and app.admin.describer is app.describer
    assert app.console_backend() is app.console_backend()
    assert app.console_backend()._memory is app.memory


async def test_todays_usage_is_seeded_at_start_up_so_a_groups_first_at_reads_no_ledger(
    make_bot, fake_llm: FakeOpenAI, clock: FakeClock, tmp_path: Path
) -> None:
    # the group spent its budget earlier today, before a restart
    url = f"sqlite+aiosqlite:///{tmp_path / 'pallas.db'}"
    await migrate.upgrade(url)
    engine = create_engine(url)
    for _ in range(2):
        entry = UsageEntry(clock.now(), BOT, GROUP, "chat", "m", 40, 10)
        await UsageRepository(session_factory(engine)).record(entry)
    await engine.dispose()
    bot = await make_bot('[cost.budget]\nchat_calls = 2\nstep_pct = 0\nphrases = ["今天说累了"]\n')
    counters, scope = bot.app.cost.counters, state_keys.cost_scope(GROUP)
    counted = await counters.usage(clock.now(), scope, "chat")
    assert (counted.calls, counted.tokens) == (2, 100), "seeded at start-up"
    await bot.app.chat.handle(group_turn("在吗", clock, at_bot=True), bot.sender)
    assert bot.sender.texts() == ["今天说累了"] and fake_llm.chat_requests() == []
    # after midnight, the group warm-up seeds the group's new day when the group is seen
    clock.advance(DAY_S)
    seeded = state_keys.cost_seeded(local_day(clock.now()), scope)
    assert await bot.app.runtime.state.get(seeded) is None
    await bot.app.preload.warm(BOT, GROUP)
    assert await bot.app.runtime.state.get(seeded) is not None


class SpyHold:
    """An addressed message's hold on the loop, as the edge hands it to the turn: records, at
    each release, how many model requests the fake server had seen and how many pauses the
    turn had taken."""

    def __init__(self, fake: FakeOpenAI, sleep: ClockSleep) -> None:
        self.fake, self.sleep = fake, sleep
        self.released_at: list[tuple[int, int]] = []

    def release(self) -> None:
        self.released_at.append((len(self.fake.chat_requests()), len(self.sleep.pauses)))


async def test_an_addressed_turn_releases_its_hold_as_its_model_request_goes_out(
    make_bot, fake_llm: FakeOpenAI, clock: FakeClock
) -> None:
    bot = await make_bot()
    hold = SpyHold(fake_llm, bot.sleep)
    outcome = await bot.app.chat.handle(
        group_turn("明天几点开会？", clock, at_bot=True), bot.sender, hold=hold
    )
    assert outcome.outcome == "delivered"
    assert hold.released_at, "the hold must end, or unaddressed work waits for its cap"
    assert hold.released_at[0][0] == 0, "released before the request, not after the answer"
    await bot.app.chat.drain_background()


async def test_a_turn_that_waits_releases_its_hold_first(
    make_bot, fake_llm: FakeOpenAI, clock: FakeClock
) -> None:
    """A turn retried after the group cooldown sleeps: a sleeping turn needs no loop."""
    bot = await make_bot(AT_WAITS_COOLDOWN)
    first = await bot.app.chat.handle(group_turn("明天几点开会？", clock, at_bot=True), bot.sender)
    assert first.outcome == "delivered"
    paused = len(bot.sleep.pauses)
    hold = SpyHold(fake_llm, bot.sleep)
    second = await bot.app.chat.handle(
        group_turn("那地点呢？", clock, user=BOB, at_bot=True), bot.sender, hold=hold
    )
    assert second.outcome == "delivered" and len(bot.sleep.pauses) > paused
    assert hold.released_at and hold.released_at[0] == (1, paused), "released as it waits"
    await bot.app.chat.drain_background()


class _OtherPlugin:
    """Another NoneBot plugin answered the line (`pallas.turn.context.OtherPlugins`)."""

    def __init__(self, name: str | None) -> None:
        self.name, self.waited = name, 0

    def known(self) -> str | None:
        return self.name

    async def settled(self) -> str | None:
        self.waited += 1
        return self.name


async def test_an_addressed_line_another_plugin_answered_gets_no_model_call(
    make_bot, fake_llm: FakeOpenAI, clock: FakeClock
) -> None:
    bot = await make_bot()
    others = _OtherPlugin("nonebot_plugin_roll")
    outcome = await bot.app.chat.handle(
        group_turn("/roll d6", clock, at_bot=True), bot.sender, others=others
    )
    assert (outcome.outcome, outcome.reason) == ("skip", "handled_by_plugin:nonebot_plugin_roll")
    assert others.waited == 1 and bot.sender.sent == [] and fake_llm.chat_requests() == []
    last = (await bot.app.runtime.routing.recent_decisions(BOT, GROUP))[-1]
    assert (last["stage"], last["reason"]) == ("plugin", "handled_by_plugin:nonebot_plugin_roll")
    # the member is not left in flight: the next @ is answered
    outcome = await bot.app.chat.handle(group_turn("在吗？", clock, at_bot=True), bot.sender)
    assert outcome.outcome == "delivered"


async def test_an_addressed_line_no_plugin_took_is_answered_after_the_verdict(
    make_bot, fake_llm: FakeOpenAI, clock: FakeClock
) -> None:
    bot = await make_bot()
    others = _OtherPlugin(None)
    outcome = await bot.app.chat.handle(
        group_turn("明天几点开会？", clock, at_bot=True), bot.sender, others=others
    )
    assert outcome.outcome == "delivered" and others.waited == 1
    await bot.app.chat.drain_background()
