"""One reply per provider family through the real bot, each fake speaking its family's wire
format and refusing what the real one refuses (issue 29):

- OpenAI o-series: `max_completion_tokens`, no `temperature`;
- DeepSeek-R1: `reasoning_content` besides the answer (never shown);
- Qwen3 on DashScope: one leading system message, `enable_thinking: false`;
- Ollama serving DeepSeek-R1: `<think>…</think>` in front of the answer (never shown);
- vLLM with a strict chat template: user / assistant alternation (the operator's profile).

And DeepSeek's prefix cache: its hits reach the ledger, `pallas usage` and the console.
"""

from __future__ import annotations

import asyncio
import os
import re
import sqlite3
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import BOT_ID, at_bot, sent_texts
from tests.harness.bot_process import REPO, BotProcess
from tests.harness.fake_openai import FakeOpenAI
from tests.harness.fake_providers import OLLAMA_THINKING, REASONER_THINKING
from tests.harness.onebot_peer import OneBotPeer

pytestmark = pytest.mark.e2e

GROUP = 67_000_001
MEMBERS = (53_001, 53_002)
TOKEN = "families-console-token"

FAMILIES = [
    ("openai", "o3-mini", ""),
    ("deepseek", "deepseek-reasoner", ""),
    ("qwen", "qwen3-32b", ""),
    ("ollama", "deepseek-r1:7b", ""),
    ("vllm", "mistral-7b-instruct", '[models."mistral"]\nstrict_alternation = true\n'),
]


async def _family_bot(
    workdir: Path, llm: FakeOpenAI, model: str, group_toml: str
) -> tuple[BotProcess, OneBotPeer]:
    bot = BotProcess(
        workdir,
        env_overrides={
            "OPENAI_BASE_URL": llm.base_url,
            "PALLAS_CHAT_MODEL": model,
            "PALLAS_CHEAP_MODEL": model,
            "PALLAS_LLM_TIMEOUT_SECONDS": "5",
            "PALLAS_LLM_MAX_RETRIES": "0",
            "PALLAS_CONSOLE_TOKEN": TOKEN,
        },
    )
    bot.prepare()
    if group_toml:
        (bot.config_dir / "groups" / f"{GROUP}.toml").write_text(group_toml, encoding="utf-8")
    await bot.start()
    peer = OneBotPeer(bot.ws_url, self_id=BOT_ID, access_token=bot.access_token)
    await peer.connect()
    return bot, peer


def _number(page: str, pattern: str) -> float:
    found = re.search(pattern, page)
    assert found is not None, pattern
    return float(found.group(1))


@pytest.fixture
async def flavored(request: pytest.FixtureRequest) -> AsyncIterator[FakeOpenAI]:
    server = FakeOpenAI(default_reply="在的在的", flavor=request.param)
    await server.start()
    yield server
    await server.stop()


@pytest.mark.parametrize(
    ("flavored", "model", "group_toml"),
    [pytest.param(f, m, t, id=f) for f, m, t in FAMILIES],
    indirect=["flavored"],
)
async def test_each_family_answers_without_leaking_its_thinking(
    tmp_path: Path, flavored: FakeOpenAI, model: str, group_toml: str
) -> None:
    bot, peer = await _family_bot(tmp_path / "bot", flavored, model, group_toml)
    try:
        await peer.send_event(peer.group_message(GROUP, MEMBERS[0], "今天好冷啊"))
        await peer.send_event(peer.group_message(GROUP, MEMBERS[1], at_bot("帕拉斯在吗")))
        sends = await peer.wait_for_calls("send_group_msg", timeout=20)
        assert sent_texts(sends) == ["在的在的"], bot.tail_log(40)
        (request, *_) = [r for r in flavored.chat_requests() if "帕拉斯在吗" in str(r.body)]
        body = request.body
        assert body["model"] == model
        if flavored.flavor == "openai":
            assert "max_tokens" not in body and "temperature" not in body
            assert body["max_completion_tokens"] > 400  # the reply's budget plus thinking
        if flavored.flavor == "qwen":
            assert body["enable_thinking"] is False
            assert [m["role"] for m in body["messages"]].count("system") == 1
        if flavored.flavor == "vllm":
            roles = [m["role"] for m in body["messages"]][1:]
            assert roles == ["user", "assistant"] * (len(roles) // 2) + ["user"]
        for thinking in (REASONER_THINKING, OLLAMA_THINKING):
            assert thinking not in str(sends)
    finally:
        await peer.close()
        await bot.stop()


@pytest.mark.parametrize("flavored", ["deepseek"], indirect=True)
async def test_deepseek_cache_hits_reach_the_ledger_the_cli_and_the_console(
    tmp_path: Path, flavored: FakeOpenAI
) -> None:
    prices = (
        '[models."deepseek-chat"]\ninput_price = 2.0\ncached_input_price = 0.5\n'
        "output_price = 8.0\n"
    )
    bot, peer = await _family_bot(tmp_path / "bot", flavored, "deepseek-chat", prices)
    questions = ("今天吃什么好", "推荐个电影", "明天会下雨吗", "周末去哪玩")
    try:
        for n, question in enumerate(questions, 1):
            member = MEMBERS[n % 2]
            await peer.send_event(peer.group_message(GROUP, member, f"第{n}句闲聊"))
            await peer.send_event(peer.group_message(GROUP, member, at_bot(question)))
            await peer.wait_for_calls("send_group_msg", count=n, timeout=20)
        replies = [
            r for r in flavored.chat_requests()
            if any(str(r.messages[-1].get("content")).endswith(q) for q in questions)
        ]  # fmt: skip
        assert [bool(r.cached_tokens) for r in replies] == [False, True, True, True]
        hits = [r.cached_tokens or 0 for r in flavored.chat_requests()]  # background calls too

        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{bot.port}") as http:
            assert (await http.post("/console/login", data={"token": TOKEN})).status_code == 303
            page = (await http.get("/console/usage")).text
    finally:
        await peer.close()
        await bot.stop()

    with sqlite3.connect(bot.db_path) as db:
        prompt, cached = db.execute(
            "select sum(prompt_tokens), sum(cached_tokens) from usage_ledger"  # every task
        ).fetchone()
    assert cached == sum(hits) and 0 < cached < prompt
    share = round(cached / prompt * 100)
    # the page was read while background calls (memory extraction) could still add to the
    # ledger: its share is the ledger's at that moment, within a few points of the final one
    shown = _number(page, r"提示缓存命中：<b>(\d+)%</b>")
    assert shown > 0 and abs(shown - share) <= 5, (shown, share)
    cost, naive = (
        _number(page, f'id="{name}">([\\d.]+)<') for name in ("total-cost", "cost-without-cache")
    )
    assert cost < naive

    env = {**os.environ, "DATABASE_URL": bot.database_url, "PALLAS_CONFIG_DIR": str(bot.config_dir)}
    cli = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "pallas.cli", "usage", "--group", str(GROUP), "--days", "1",
        env=env, cwd=REPO, stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out = (await asyncio.wait_for(cli.communicate(), 60))[0].decode()
    assert cli.returncode == 0, out
    assert f"prompt cache: {share}% of {prompt} prompt tokens cached" in out, out
    assert re.search(r"cost: [\d.]+ \(without the cache [\d.]+\)", out), out
