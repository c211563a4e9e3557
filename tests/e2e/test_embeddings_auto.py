"""Embeddings turn on by themselves where the provider serves them (issue 34, item 3): with no
PALLAS_EMBEDDING_MODEL, the bot asks the endpoint's model list, probes the embedding model it
lists once in the background and uses it — a group memory that shares no word with a question is
then found by its vector alone. Where /embeddings answers 404 the bot stays on BM25 with one log
line, and the same question finds nothing."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.e2e.conftest import BOT_ID, running_bot, sent_texts
from tests.e2e.test_memory import ask
from tests.harness.bot_process import BotProcess
from tests.harness.fake_openai import FakeOpenAI, fake_embedding
from tests.harness.onebot_peer import OneBotPeer

pytestmark = pytest.mark.e2e

GROUP = 67_000_001
SUPERUSER, MEMBER = 10001, 54_001
PASSWORD = "暗号蓝色企鹅"  # the group memory: no word in common with the question
QUESTION = "进门要对的那句话呢"
DISTRACTOR = "周五晚上一起打团"
GROUP_MEMORY = "【相关群内记忆"


def scripted_vector(text: str) -> list[float]:
    """The fake model's vectors: the password and the question about it point the same way
    (axis 0); everything else is a character bag with axis 0 left empty."""
    if "暗号" in text or "那句话" in text:
        return [1.0] + [0.0] * 63
    return [0.0, *fake_embedding(text, 64)[1:]]


def memory_block(system_prompt: str) -> str:
    """The group-memory section of a system prompt ('' when absent): the admin commands that
    stored the rows are in the group timeline too, so only this section says what was found."""
    if GROUP_MEMORY not in system_prompt:
        return ""
    return system_prompt.split(GROUP_MEMORY, 1)[1].split("\n\n", 1)[0]


async def embeddings_logged(bot: BotProcess, phrase: str) -> list[str]:
    for _ in range(300):
        lines = [line for line in bot.log_text().splitlines() if phrase in line]
        if lines:
            return lines
        await asyncio.sleep(0.05)
    raise TimeoutError(f"no {phrase!r} in the log:\n{bot.tail_log()}")


async def superuser(peer: OneBotPeer, text: str) -> str:
    before = len(peer.sends(GROUP))
    await peer.send_event(peer.group_message(GROUP, SUPERUSER, text))
    for _ in range(200):
        if len(peer.sends(GROUP)) > before:
            return sent_texts(peer.sends(GROUP))[-1]
        await asyncio.sleep(0.05)
    raise TimeoutError(f"no answer to {text!r}")


@pytest.fixture
def embedding_llm(fake_llm: FakeOpenAI) -> FakeOpenAI:
    """The fake endpoint lists a chat model and an embedding model, and answers vectors."""
    fake_llm.models = ["gpt-4o-mini", "bge-m3:latest"]
    fake_llm.embed = scripted_vector
    return fake_llm


async def _peer(bot: BotProcess) -> OneBotPeer:
    peer = OneBotPeer(bot.ws_url, self_id=BOT_ID, access_token=bot.access_token)
    await peer.connect()
    return peer


async def test_embeddings_turn_on_by_themselves_and_find_a_fact_by_vector_only(
    tmp_path: Path, embedding_llm: FakeOpenAI
) -> None:
    fake_llm = embedding_llm
    async with running_bot(tmp_path / "bot", fake_llm) as bot:
        [line] = await embeddings_logged(bot, "embeddings on")
        assert "bge-m3:latest" in line and "64-dimension vector" in line
        assert fake_llm.model_list_calls == 1
        peer = await _peer(bot)
        try:
            status = await superuser(peer, "/pallas status")
            assert "向量检索：开启（bge-m3:latest，启动时探测可用）" in status
            for fact in (PASSWORD, DISTRACTOR):
                assert "记下了" in await superuser(peer, f"/pallas memory add group {fact}")
            asked = await ask(peer, fake_llm, GROUP, MEMBER, QUESTION)
            block = memory_block(asked.system_prompt)
            assert PASSWORD in block and DISTRACTOR not in block, block
            inputs = [r.body["input"] for r in fake_llm.embedding_requests()]
            assert inputs[0] == ["你好"], "the probe: one tiny call"
            assert [QUESTION] in [i if isinstance(i, list) else [i] for i in inputs]
        finally:
            await peer.close()


async def test_a_404_embeddings_endpoint_leaves_bm25_with_one_log_line(
    tmp_path: Path, embedding_llm: FakeOpenAI
) -> None:
    fake_llm = embedding_llm
    fake_llm.embeddings_status = 404
    async with running_bot(tmp_path / "bot", fake_llm) as bot:
        [line] = await embeddings_logged(bot, "embeddings off")
        assert "the probe of bge-m3:latest failed: HTTP 404" in line
        peer = await _peer(bot)
        try:
            status = await superuser(peer, "/pallas status")
            off = "向量检索：关闭（探测 bge-m3:latest 失败：HTTP 404），用关键词与概念检索"
            assert off in status
            await superuser(peer, f"/pallas memory add group {PASSWORD}")
            asked = await ask(peer, fake_llm, GROUP, MEMBER, QUESTION)
            assert memory_block(asked.system_prompt) == "", "BM25 alone cannot find it"
            assert len(fake_llm.embedding_requests()) == 1, "only the probe asked for vectors"
            logged = [x for x in bot.log_text().splitlines() if "| embedding" in x]
            assert logged == [line], "one line, and no failed embedding call after it"
        finally:
            await peer.close()
