"""What the reply path gets from group learning, and how negative feedback changes it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from pallas.app_wiring import feedback_for, insight_for
from pallas.context.context import GatherRequest, SourceContribution
from pallas.core.clock import FakeClock
from pallas.core.db.repositories.snapshots import InjectionSnapshot
from pallas.core.records import StoredMessage
from pallas.core.turn import TurnInput
from pallas.features.learning.context_source import GroupLearningSource
from pallas.features.learning.feedback_repository import FeedbackRepository
from pallas.features.learning.feedback_service import (
    handle_negative_feedback,
    undo_negative_feedback,
)
from pallas.features.learning.group_insight_processor import run_sweep
from pallas.runtime import PallasRuntime
from tests.harness.fake_openai import FakeOpenAI
from tests.harness.learning_script import group_script, label_answer
from tests.integration.learning_runtime import (
    ADMIN,
    BOT,
    MEMBERS,
    start_runtime,
    stored,
    write_config,
)

GROUP, GROUP_B, QUIET = 8_001, 8_002, 8_003
BOT_LINE_ID = 5_555


@pytest.fixture
async def runtime(
    tmp_path: Path, clock: FakeClock, database_url: str
) -> AsyncIterator[PallasRuntime]:
    write_config(tmp_path, str(QUIET), "[learning]\ninject_enabled = false\n")
    fake = FakeOpenAI(in_process=True)
    await fake.start()
    rt = await start_runtime(tmp_path, fake, clock, database_url)
    for n, group in enumerate((GROUP, QUIET)):
        lines = group_script(40, first_id=1 + n * 1000, users=MEMBERS)
        await rt.repos.messages.add_many(stored(lines, group_id=group, t0=clock.now() - 7200))
    await rt.repos.messages.add_many(
        [StoredMessage(BOT, GROUP_B, 1, MEMBERS[0], clock.now() - 60, "大家好")]
    )
    fake.enqueue(*[label_answer()] * 8)
    await run_sweep(insight_for(rt))
    yield rt
    await rt.stop()
    await fake.stop()


async def gather(
    rt: PallasRuntime, source: GroupLearningSource, group_id: int, text: str
) -> SourceContribution:
    turn = TurnInput(
        bot_id=BOT, group_id=group_id, user_id=MEMBERS[0], message_id=99, time=0.0, text=text
    )
    return await source.gather(
        GatherRequest(
            turn=turn,
            current_text=text,
            now=rt.clock.now(),
            config=rt.group_configs.get(group_id),
            persona_name="帕拉斯",
            allow_persistent_memory=True,
            short_social=False,
            addressed=True,
        )
    )


def expression(contribution: SourceContribution) -> str:
    block = contribution.blocks.get("group_expression")
    return block.text if block is not None else ""


async def test_recall_rhythm_and_shape_come_from_this_group_only(runtime: PallasRuntime) -> None:
    source = GroupLearningSource(runtime.sessions, runtime.state)
    mine = await gather(runtime, source, GROUP, "快了吗？")
    text = expression(mine)
    assert text.startswith("【群表达指导】")
    assert "- 触发「快了快了」时：确实可以" in text
    assert "本群真人单条短气泡为主" in text
    tokens = mine.blocks["group_expression"].source_tokens
    assert tokens and all(t.startswith(f"pair:{BOT}:{GROUP}:") for t in tokens)
    assert "behavior_reference" not in mine.blocks  # direct pairs win over observed strategies
    shape = mine.reply_shape
    assert shape is not None and shape.learned
    assert (shape.max_segments, shape.max_chars, shape.rhythm.value) == (1, 40, "single")

    other = await gather(runtime, source, GROUP_B, "快了吗？")
    assert other.blocks == {} and other.reply_shape is None

    quiet = await gather(runtime, source, QUIET, "快了吗？")
    assert quiet.blocks == {} and quiet.reply_shape is None


async def test_without_direct_pairs_observed_strategies_are_the_fallback(
    runtime: PallasRuntime,
) -> None:
    contribution = await gather(
        runtime, GroupLearningSource(runtime.sessions, runtime.state), GROUP, "量子力学怎么入门？"
    )
    assert "group_expression" not in contribution.blocks
    block = contribution.blocks["behavior_reference"]
    lines = block.text.splitlines()
    assert lines[0] == "【真人接话参考】"
    assert 1 <= sum(1 for line in lines if line.startswith("- 类似")) <= 3
    assert block.source_tokens and all(t.startswith("strategy:") for t in block.source_tokens)


async def _bot_turn(rt: PallasRuntime, contribution: SourceContribution) -> StoredMessage:
    bot_line = StoredMessage(
        BOT, GROUP, BOT_LINE_ID, BOT, rt.clock.now() - 10, "确实可以呀", is_bot=True
    )
    await rt.repos.messages.add_many([bot_line])
    sections = [
        {"id": sid, "source_tokens": list(block.source_tokens)}
        for sid, block in contribution.blocks.items()
    ]
    sections.append({"id": "group_timeline", "source_tokens": [f"ambient:timeline:{GROUP}:7"]})
    sections.append({"id": "memory", "source_tokens": [], "memory_ids": ["m1"]})
    data = {
        "sections": sections,
        "messages": [{"source_token": "session:3"}, {"source_token": "current:99"}],
        "sent_message_ids": [BOT_LINE_ID],
    }
    await rt.repos.snapshots.save(
        InjectionSnapshot("turn-1", BOT, GROUP, MEMBERS[0], 99, rt.clock.now(), "m", "ok", data)
    )
    return bot_line


def _reply(user_id: int, text: str = "不可以", role: str = "member") -> StoredMessage:
    return StoredMessage(BOT, GROUP, 777, user_id, 0.0, text, reply_to=BOT_LINE_ID, role=role)


async def test_negative_feedback_blames_the_turn_and_changes_the_next_injection(
    runtime: PallasRuntime, clock: FakeClock
) -> None:
    source = GroupLearningSource(runtime.sessions, runtime.state)
    before = await gather(runtime, source, GROUP, "快了吗？")
    blamed = before.blocks["group_expression"].source_tokens
    bot_line = await _bot_turn(runtime, before)

    ignored = await handle_negative_feedback(feedback_for(runtime), _reply(MEMBERS[1]), bot_line)
    assert (ignored.handled, ignored.reason) == (False, "not_admin")
    result = await handle_negative_feedback(feedback_for(runtime), _reply(ADMIN), bot_line)
    assert result.handled and result.created and result.turn_id == "turn-1"
    weights = {(b.kind, b.source_id): b.weight for b in result.outcome.blames}
    assert all(weights[("expression", t)] == -3.0 for t in blamed)
    assert weights[("ambient", f"ambient:timeline:{GROUP}:7")] == -1.0
    assert weights[("memory", "memory:m1")] == -1.0
    assert set(result.outcome.ignored_sources) == {"current", "session"}
    again = await handle_negative_feedback(
        feedback_for(runtime), _reply(ADMIN, "不可以！"), bot_line
    )
    assert again.handled and not again.created
    stored_rows = await FeedbackRepository(runtime.sessions).for_group(BOT, GROUP)
    assert len(stored_rows) == 1

    after = await gather(runtime, source, GROUP, "快了吗？")
    block = after.blocks.get("group_expression")
    assert not set(blamed) & set(block.source_tokens if block is not None else ())
    assert "确实可以" not in expression(after)
    assert "确实可以呀" in after.feedback_blocklist  # the rejected line leaves the ambient excerpt

    undo = await undo_negative_feedback(
        feedback_for(runtime), BOT, GROUP, bot_message_id=BOT_LINE_ID
    )
    assert undo.reason == "undone"
    restored = await gather(runtime, source, GROUP, "快了吗？")
    assert "- 触发「快了快了」时：确实可以" in expression(restored)
    assert restored.feedback_blocklist == ()


async def test_feedback_fades_with_a_thirty_day_half_life(
    runtime: PallasRuntime, clock: FakeClock
) -> None:
    source = GroupLearningSource(runtime.sessions, runtime.state)
    before = await gather(runtime, source, GROUP, "快了吗？")
    bot_line = await _bot_turn(runtime, before)
    await handle_negative_feedback(feedback_for(runtime), _reply(0, role="admin"), bot_line)
    clock.advance(40 * 86_400)  # expression blame 3 × 0.5^(40/30) ≈ 1.2: still blocked
    assert "确实可以" not in expression(await gather(runtime, source, GROUP, "快了吗？"))
    clock.advance(60 * 86_400)  # 100 days: 3 × 0.5^(100/30) ≈ 0.3 < 0.5
    assert "确实可以" in expression(await gather(runtime, source, GROUP, "快了吗？"))
