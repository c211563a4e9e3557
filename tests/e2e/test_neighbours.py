"""Pallas beside real NoneBot plugins from PyPI (issue 45), through the real OneBot protocol.

The bot process loads two plugins of the test extras next to its own (`PALLAS_PLUGINS`, as an
operator's `[tool.nonebot.plugins]` would) with `COMMAND_START=["/", ""]` as their usage asks:

- nonebot-plugin-roll 0.2.3: `/rd 2d6`, aliases `/roll` and `/掷骰` (priority 10)
- nonebot-plugin-status 0.9.0: `/status`, alias `状态`, superusers only (priority 10)

One conversation: an @ question the (5 s) slow model is still answering while a member rolls
dice, a plain command, an @ + command, an alias + command, and a normal @ question. Each gets one
answer; the commands get no model call; the roll is answered within its own time whatever the
model takes; every line is recorded and the plugins' sends are recorded as theirs.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.e2e.conftest import BOT_ID, DbView, at_bot, running_bot, sent_texts
from tests.harness.bot_process import BotProcess
from tests.harness.fake_openai import FakeOpenAI, Scripted
from tests.harness.onebot_peer import OneBotPeer

pytestmark = pytest.mark.e2e

GROUP = 64_500_045
SUPERUSER, ALICE, BOB = 10_001, 41_001, 41_002
ROLL, STATUS = "nonebot_plugin_roll", "nonebot_plugin_status"
SLOW_MODEL_S = 5.0


@pytest.fixture
async def neighbour_bot(tmp_path: Path, fake_llm: FakeOpenAI) -> AsyncIterator[BotProcess]:
    async with running_bot(
        tmp_path / "bot",
        fake_llm,
        PALLAS_PLUGINS=f"{ROLL},{STATUS}",
        COMMAND_START='["/", ""]',
        PALLAS_LLM_TIMEOUT_SECONDS="10",
    ) as process:
        yield process


@pytest.fixture
async def peer(neighbour_bot: BotProcess) -> AsyncIterator[OneBotPeer]:
    client = OneBotPeer(neighbour_bot.ws_url, self_id=BOT_ID, access_token="test-token")
    await client.connect()
    yield client
    await client.close()


@pytest.fixture
async def db(neighbour_bot: BotProcess) -> AsyncIterator[DbView]:
    view = DbView(neighbour_bot.database_url)
    yield view
    await view.engine.dispose()


# nonebot-plugin-roll's random easter eggs (about 1 % each): a bonus or a greeting sent as an
# extra line beside the roll's result, or the result replaced by 「彩蛋！骰子之神…消失了」
EGG = "彩蛋！"
EGG_INSTEAD = "彩蛋！骰子之神"  # the roll's answer itself, not an extra line


def _answers(peer: OneBotPeer) -> list[tuple[float, str]]:
    """When and what the group received, without nonebot-plugin-roll's random extra lines."""
    calls = peer.sends(GROUP)
    return [(c.at, t) for c, t in zip(calls, sent_texts(calls), strict=True)
            if not t.startswith(EGG) or t.startswith(EGG_INSTEAD)]  # fmt: skip


def _without_eggs(peer: OneBotPeer) -> list[str]:
    return [text for _, text in _answers(peer)]


async def _answer(peer: OneBotPeer, event: dict, *, after: int, within: float = 6.0) -> float:
    """Send `event`; the seconds until the group's answer number `after` (eggs not counted:
    an egg after a roll is no answer, and counting it let the next line go before the
    status plugin had answered, so the two answers came in the other order)."""
    sent = time.monotonic()
    await peer.send_event(event)
    deadline = sent + within
    while len(answers := _answers(peer)) <= after:
        if time.monotonic() > deadline:
            raise TimeoutError(f"answer {after} not sent within {within} s: {answers}")
        await asyncio.sleep(0.02)
    return answers[after][0] - sent


async def test_commands_answered_once_without_the_model_and_without_waiting_for_it(
    neighbour_bot: BotProcess, peer: OneBotPeer, fake_llm: FakeOpenAI, db: DbView
) -> None:
    # 1. an @ question the slow model answers in 5 s; meanwhile Bob rolls dice (no @)
    fake_llm.enqueue(Scripted(text="先练练级再打", delay=SLOW_MODEL_S))
    await peer.send_event(peer.group_message(GROUP, ALICE, at_bot("这关怎么打？")))
    await fake_llm.wait_for_requests(1)
    roll_s = await _answer(peer, peer.group_message(GROUP, BOB, "/roll 2d6"), after=0)
    assert roll_s < 2.0, f"the roll waited {roll_s:.2f} s for Pallas's model"
    deadline = time.monotonic() + SLOW_MODEL_S + 5
    while len(texts := _without_eggs(peer)) < 2 and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert texts[1:2] == ["先练练级再打"], texts  # the model's answer came after the roll
    print(f"plugin answer with a {SLOW_MODEL_S:.0f} s model: {roll_s:.3f} s")

    # 2. a plain command, @ + command, alias + command (NoneBot strips 牛牛), superuser status,
    # each while the model would take 5 s: the plugin (priority 10) answers the same line at
    # once, Pallas (priority 1) neither calls the model nor holds the dispatch meanwhile
    fake_llm.enqueue(Scripted(text="不该出现的回答", delay=SLOW_MODEL_S))
    lines = [
        peer.group_message(GROUP, BOB, "/rd 1d20"),
        peer.group_message(GROUP, BOB, at_bot("/roll 3d6")),
        peer.group_message(GROUP, ALICE, "牛牛 掷骰 2d10"),
        peer.group_message(GROUP, SUPERUSER, at_bot("状态")),
    ]
    for n, event in enumerate(lines, start=2):
        took = await _answer(peer, event, after=n)
        print(f"command {n - 1}: answered in {took:.3f} s")
        assert took < 2.0, f"command {n - 1} waited {took:.2f} s"
    assert len(fake_llm.chat_requests()) == 1
    fake_llm.script.clear()
    # 3. a normal @ question: the model answers it
    fake_llm.enqueue("周五下午三点")
    await _answer(peer, peer.group_message(GROUP, ALICE, at_bot("明天几点开会？")), after=6)

    await _settle(peer, fake_llm, sends=7, requests=2)
    # nonebot-plugin-roll now and then adds its own second line to a roll (an easter egg,
    # 「彩蛋！…」, at random): the plugin's, not an answer of Pallas's
    texts = _without_eggs(peer)
    eggs = len(peer.sends(GROUP)) - len(texts)
    # one answer per line: nothing answered twice
    assert len(texts) == 7, sent_texts(peer.sends(GROUP))
    assert [t for t in texts if "CPU" in t or "Memory" in t] == [texts[5]]  # status, once
    assert texts[6] == "周五下午三点"
    assert len(fake_llm.chat_requests()) == 2  # no model call for any command

    # every line recorded; the plugins' sends recorded as theirs, never as the persona's
    await db.wait_for_count(7 + 7 + eggs, group_id=GROUP)
    rows = await db.messages.recent(BOT_ID, GROUP, limit=50)
    members = [r for r in rows if not r.is_bot]
    assert len(members) == 7
    by_plugin = sorted(r.sent_by for r in rows if r.is_bot and r.sent_by)
    assert by_plugin == sorted([ROLL] * (4 + eggs) + [STATUS])
    persona = [r.text for r in rows if r.persona_line]
    assert persona == ["先练练级再打", "周五下午三点"]
    # the last request's timeline shows the rolls as the plugin's lines, not the persona's
    timeline = fake_llm.chat_requests()[1].messages[0]["content"]
    assert f"插件 {ROLL}：" in timeline
    shown = [line for line in timeline.splitlines() if "掷出了" in line]  # the plugin's words
    assert shown and all(line.startswith(f"插件 {ROLL}：") for line in shown), shown
    log = neighbour_bot.log_text()
    assert f"handled by plugin {ROLL}, not answered" in log
    assert f"handled by plugin {STATUS}, not answered" in log


async def _settle(peer: OneBotPeer, fake_llm: FakeOpenAI, *, sends: int, requests: int) -> None:
    """A moment for a wrong second answer or model call to show up."""
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline:
        if len(peer.sends(GROUP)) > sends or len(fake_llm.chat_requests()) > requests:
            return
        await asyncio.sleep(0.1)
