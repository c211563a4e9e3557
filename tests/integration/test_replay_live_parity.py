"""`pallas replay` and the live bot decide the same: one route step, two callers.

The live side is `app.chat.route_step` of an app built by the composition root (`start_app`, the
repo's config with its dice on); the replay side is `build_replay_route_step`, what
`pallas replay` runs. Both route every member message of the benchmark transcripts at the
event's time, and after each LLM turn both are told the same delivery; every decision (next
step, outcome, stage, reason) must match.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from pallas.app import build_replay_route_step
from pallas.cli.replay.events import _parse, adapter_to_me
from pallas.cli.replay.report import ReplayTotals
from pallas.core.clock import FakeClock
from pallas.core.state import MemoryStateStore
from pallas.onebot.convert import turn_input_from_event
from pallas.turn.route import NextStep, RoutedTurn, RouteStep
from tests.harness.fake_openai import FakeOpenAI
from tests.integration.chat_app import REPO, start_chat_app

TRANSCRIPTS = REPO / "benchmarks" / "transcripts"


def _decision(routed: RoutedTurn) -> tuple[str, ...]:
    route = routed.route
    if route is None:
        return (routed.step.value, routed.fresh.reason)
    return (routed.step.value, route.outcome.value, route.stage, route.reason)


async def _delivered(router: RouteStep, routed: RoutedTurn, reply_id: int) -> None:
    turn, now = routed.turn, router.clock.now()
    routing = routed.config.routing
    engine = router.routing
    await engine.record_bot_reply(
        turn.bot_id, turn.group_id, turn.user_id, [reply_id], now, config=routing
    )
    await engine.finish_turn(turn.bot_id, turn.group_id, turn.user_id)


@pytest.mark.parametrize("name", ["campus_group", "game_group"])
async def test_replay_and_the_live_route_step_decide_the_same(
    name: str, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    lines = (TRANSCRIPTS / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    events, _, bot_id = _parse(lines, None, ReplayTotals())
    assert bot_id is not None and events
    live_clock = FakeClock(events[0].time)
    app, _ = await start_chat_app(tmp_path, fake_llm, live_clock, no_dice=False)
    try:
        live = app.chat.route_step
        replay_clock = FakeClock(events[0].time)
        replay = build_replay_route_step(
            replay_clock,
            MemoryStateStore(replay_clock),
            group_config=app.runtime.group_configs.get,
            persona=app.runtime.personas.get,
            rng=random.Random(7),  # the app's seed (start_chat_app)
        )
        replies, compared, llm_turns = -1, 0, 0
        for event in events:
            if event.is_bot:
                continue
            config = app.runtime.group_configs.get(event.group_id)
            aliases = app.addressing.routing_aliases(app.runtime.personas.get(config.persona))
            to_me = adapter_to_me(
                event.segments, self_id=bot_id, nicknames=aliases, reply_known=False
            )
            turn = turn_input_from_event(event.payload, to_me=to_me)
            live_clock.set(max(live_clock.now(), event.time))
            replay_clock.set(max(replay_clock.now(), event.time))
            got_live = await live.route(turn)
            got_replay = await replay.route(turn)
            assert _decision(got_live) == _decision(got_replay), f"line {event.line}"
            compared += 1
            if got_live.step is NextStep.REPLY:
                llm_turns += 1
                replies -= 1
                await _delivered(live, got_live, replies)
                await _delivered(replay, got_replay, replies)
        assert compared > 100 and llm_turns > 0
    finally:
        await app.stop()
