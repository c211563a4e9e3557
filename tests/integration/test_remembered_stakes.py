"""Issue 32: what the bot remembers gives it a stake in an unaddressed line — the group's
knowledge, the speaker's earlier topics, the speaker's facts — loaded off the ingest path,
never another member's or another group's."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest

from pallas.app import PallasApp
from pallas.core.clock import FakeClock
from pallas.features.memory import KNOWLEDGE, PERSON_FACTS, group_scope
from pallas.features.session.repository import SessionTopic
from tests.harness.fake_openai import FakeOpenAI
from tests.integration.chat_app import ALICE, BOB, BOT, GROUP, T0, group_turn, start_chat_app

OTHER_GROUP = GROUP + 1
# every unaddressed line rolls the ambient trigger; the stake decides
ALWAYS_AMBIENT = """
[routing.ambient]
enabled = true
rate = 1.0
cooldown_s = 0
budget = 100
"""


@pytest.fixture
async def app(tmp_path: Path) -> AsyncIterator[PallasApp]:
    fake = FakeOpenAI(default_reply="好哦", in_process=True)
    await fake.start()
    app, _ = await start_chat_app(tmp_path, fake, FakeClock(T0), group_toml=ALWAYS_AMBIENT)
    other = tmp_path / "config" / "groups" / f"{OTHER_GROUP}.toml"
    other.write_text(ALWAYS_AMBIENT, encoding="utf-8")
    memory = app.memory
    for group, kind, text, subject in (
        (GROUP, PERSON_FACTS, "TA在学日语", ALICE),
        (GROUP, KNOWLEDGE, "源石病：一种由源石引起的疾病，不会通过空气传播", None),
        (OTHER_GROUP, PERSON_FACTS, "TA在学法语", ALICE),
    ):
        await memory.remember(bot_id=BOT, scope=group_scope(BOT, group), kind=kind, text=text,
                              origin="admin", subject_user_id=subject)  # fmt: skip
    assert app.topics is not None
    await app.topics.add(
        SessionTopic(bot_id=BOT, group_id=GROUP, user_id=BOB, scope=group_scope(BOT, GROUP),
                     text="聊了番茄炒蛋的做法", first_turn_at=T0 - 900, last_turn_at=T0 - 600,
                     turn_count=6, created_at=T0 - 600)
    )  # fmt: skip
    yield app
    await app.stop()
    await fake.stop()


async def _stake_of(app: PallasApp, text: str, *, user: int, group: int = GROUP) -> str | None:
    clock = app.runtime.clock
    assert isinstance(clock, FakeClock)
    clock.advance(5.0)  # each line a little later: no merge with the previous one
    turn = replace(group_turn(text, clock, user=user), group_id=group)
    routed = await app.route_step.route(turn)
    assert routed.route is not None
    return routed.route.stake.reason if routed.route.stake else None


async def _loaded(app: PallasApp) -> None:
    known = app.route_step.known_stakes
    assert known is not None
    for _ in range(200):
        if not known._queue and (known._task is None or known._task.done()):
            return
        await asyncio.sleep(0.01)


async def test_the_speakers_facts_the_groups_knowledge_and_old_topics_are_stakes(
    app: PallasApp,
) -> None:
    # the first line only queues the loads: routing never waits for the database
    assert await _stake_of(app, "日语的敬语好难", user=ALICE) == "no_stake"
    await _loaded(app)
    assert await _stake_of(app, "日语的敬语好难", user=ALICE) == "member_memory"
    assert await _stake_of(app, "日语的敬语好难", user=BOB) in {"no_stake", None}  # not Bob's
    await _loaded(app)
    assert await _stake_of(app, "日语的敬语好难", user=BOB) == "no_stake"
    assert await _stake_of(app, "番茄炒蛋要先炒蛋", user=BOB) == "remembered_topic"
    assert await _stake_of(app, "源石病这么吓人", user=BOB) == "knowledge"


async def test_nothing_crosses_groups(app: PallasApp) -> None:
    await _stake_of(app, "法语的动词变位好难", user=ALICE, group=OTHER_GROUP)
    await _stake_of(app, "法语的动词变位好难", user=ALICE)
    await _loaded(app)
    # Alice's French is remembered in the other group only
    assert await _stake_of(app, "法语的动词变位好难", user=ALICE) == "no_stake"
    assert (
        await _stake_of(app, "法语的动词变位好难", user=ALICE, group=OTHER_GROUP) == "member_memory"
    )
    assert await _stake_of(app, "源石病这么吓人", user=BOB, group=OTHER_GROUP) == "no_stake"
