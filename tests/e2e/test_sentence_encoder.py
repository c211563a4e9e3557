"""The default deployment ranks memory by meaning with the encoder inside its wheel (issue 47):
a real bot with `PALLAS_SENTENCE_ENCODER` at its default loads it without the network, says so
in one start-up line and in `/pallas status`, and a correction taught with 记住 retires the fact
it replaces by meaning when the judge model is no help (the fake model answers it with no
verdict)."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from pallas.features.memory_prompt.profile import ASIDE, TOLD
from tests.e2e.conftest import BOT_ID, at_bot, running_bot, sent_texts
from tests.harness.bot_process import BotProcess
from tests.harness.fake_openai import FakeOpenAI
from tests.harness.onebot_peer import OneBotPeer

pytestmark = pytest.mark.e2e

GROUP = 64_500_047
SUPERUSER, ALICE = 10_001, 41_047


async def _answer(peer: OneBotPeer, text: str, user: int, before: int) -> str:
    await peer.send_event(peer.group_message(GROUP, user, at_bot(text)))
    calls = await peer.wait_for_calls("send_group_msg", "send_msg", count=before + 1)
    return sent_texts(calls)[before]


def _alive(pid: int) -> bool:
    stat = Path(f"/proc/{pid}/stat")
    try:
        return stat.read_text().split(") ")[1][:1] != "Z"  # a zombie is not alive
    except (OSError, IndexError):
        return False


async def _encoder_line(bot: BotProcess, timeout: float = 60.0) -> str:
    for _ in range(int(timeout / 0.2)):
        for line in bot.log_text().splitlines():
            if "sentence encoder" in line:
                return line
        await asyncio.sleep(0.2)
    raise AssertionError("no sentence encoder line in the bot's log")


async def test_the_default_bot_loads_the_encoder_offline_and_uses_it(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    # unreachable proxies: a download attempt would fail loudly, not go unnoticed
    offline = {"HF_HUB_OFFLINE": "1", "HTTPS_PROXY": "http://127.0.0.1:9"}
    env = {"PALLAS_SENTENCE_ENCODER": "local", **offline}
    async with running_bot(tmp_path / "bot", fake_llm, **env) as bot:
        line = await _encoder_line(bot)
        assert "sentence encoder on" in line and "no network" in line, line
        # its 65 MB embedding table is read from the data directory, not held in memory
        assert f"embedding table read from {tmp_path / 'bot' / 'cache'}" in line, line
        # in a process of its own (the GIL is not shared with the bot's event loop)
        found = re.search(r"own process, pid (\d+)", line)
        assert found is not None, line
        worker = int(found.group(1))
        assert _alive(worker)
        peer = OneBotPeer(bot.ws_url, self_id=BOT_ID, access_token=bot.access_token)
        await peer.connect()
        try:
            status = await _answer(peer, "/pallas status", SUPERUSER, 0)
            assert "记忆检索：按语义" in status and "不联网" in status, status
            assert await _answer(peer, "记住 我每天骑自行车上班", ALICE, 1) == "记住啦～"
            corrected = await _answer(peer, "记住 更正一下，我现在坐地铁上班了", ALICE, 2)
            recalled = await _answer(peer, "你记得我什么", ALICE, 3)
            assert "地铁" in recalled and "自行车" not in recalled, (corrected, recalled)
            # chosen by the encoder's vectors: not a verdict, and not the words' fallback
            assert "meaning:update mem:1 (meaning:" in bot.log_text()
            # an @ in other words: the fact it asks about reaches the model as relevant, an
            # unrelated one only aside (ranked by meaning; without vectors every fact is told
            # as the profile, none aside)
            assert await _answer(peer, "记住 我养了一只橘猫叫胖虎", ALICE, 4) == "记住啦～"
            await _answer(peer, "我平时坐什么去公司来着", ALICE, 5)
            request = json.dumps(fake_llm.chat_requests()[-1].messages, ensure_ascii=False)
            facts = request.split("【当前对话者的稳定偏好", 1)[-1].split("【", 1)[0]
            lines = facts.split("\\n")  # the JSON dump escapes the block's newlines
            told = next(line for line in lines if "地铁" in line)
            aside = next(line for line in lines if "橘猫" in line)
            assert told.startswith(TOLD) and aside.startswith(ASIDE), facts
            assert "sentence encoder process" not in bot.log_text()  # it never failed
        finally:
            await peer.close()
    for _ in range(50):  # the bot stopped: its encoder process is gone with it
        if not _alive(worker):
            break
        await asyncio.sleep(0.1)
    assert not _alive(worker)
