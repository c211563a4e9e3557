"""Pallas's own commands whatever `COMMAND_START` an operator sets for their plugins (issue 45):
`/pallas` and the Chinese member commands, one bot process per setting."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.e2e.conftest import BOT_ID, at_bot, running_bot, sent_texts
from tests.harness.fake_openai import FakeOpenAI
from tests.harness.onebot_peer import OneBotPeer

pytestmark = pytest.mark.e2e

GROUP = 64_500_046
SUPERUSER, ALICE = 10_001, 41_001


async def _one_answer(peer: OneBotPeer, event: dict, before: int) -> str:
    await peer.send_event(event)
    calls = await peer.wait_for_calls("send_group_msg", "send_msg", count=before + 1)
    await asyncio.sleep(0.5)  # a second answer would show up here
    assert len(peer.sends(GROUP)) == before + 1, sent_texts(peer.sends(GROUP))
    return sent_texts(calls)[before]


@pytest.mark.parametrize(
    "command_start", ['["/"]', '["/", ""]', '["!"]'], ids=["slash", "slash-or-none", "bang"]
)
async def test_pallas_and_member_commands_work_with_any_command_start(
    tmp_path: Path, fake_llm: FakeOpenAI, command_start: str
) -> None:
    async with running_bot(tmp_path / "bot", fake_llm, COMMAND_START=command_start) as bot:
        peer = OneBotPeer(bot.ws_url, self_id=BOT_ID, access_token=bot.access_token)
        await peer.connect()
        try:
            status = await _one_answer(
                peer, peer.group_message(GROUP, SUPERUSER, "/pallas status"), 0
            )
            assert "本群已记录消息" in status
            status = await _one_answer(
                peer, peer.group_message(GROUP, SUPERUSER, at_bot("/pallas status")), 1
            )
            assert "本群已记录消息" in status
            taught = await _one_answer(
                peer, peer.group_message(GROUP, ALICE, at_bot("记住 我喜欢猫")), 2
            )
            assert taught == "记住啦～"
            recalled = await _one_answer(
                peer, peer.group_message(GROUP, ALICE, at_bot("你记得我什么")), 3
            )
            assert recalled.startswith("我记得你：") and "猫" in recalled
            assert fake_llm.chat_requests() == []  # none of them reached the chat
        finally:
            await peer.close()
