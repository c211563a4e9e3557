"""MCP tools the model chooses, as the group sees them: a real MCP server (written with the SDK,
tests/harness/mcp_weather.py) over stdio and over streamable HTTP, the real bot, the OneBot
peer and a fake model that asks for the tool."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

from pallas.core.db.engine import create_engine, session_factory
from pallas.core.db.repositories.snapshots import SnapshotRepository
from pallas.core.db.repositories.usage import UsageRepository
from tests.e2e.conftest import MODULE_START_S, at_bot, sent_texts, this_test, write_group_config
from tests.harness.bot_process import REPO, BotProcess
from tests.harness.fake_openai import FakeOpenAI, Scripted, free_port, tool_call
from tests.harness.onebot_peer import OneBotPeer

pytestmark = pytest.mark.e2e
# the stdio-server bot (`mcp_bot`) is one for the module, on the module's fake model; each
# test talks in its own groups, and reads only its own log lines
SHARED_BOT = True

BOT_ID = 2_900_000_001
ALICE, SUPERUSER = 62_001, 10_001
ASK = "北京明天天气怎么样"
STDIO_SERVER = f"""
[[servers]]
name = "weather"
command = "{sys.executable}"
args = ["-m", "tests.harness.mcp_weather"]
cwd = "{REPO}"
env = ["MCP_PID_FILE", "MCP_WEATHER_DELAY_S"]
"""


def _tool_names(body: dict) -> list[str]:
    return [t["function"]["name"] for t in body.get("tools", [])]


def _tool_block(system_prompt: str) -> str:
    assert "【工具上下文】" in system_prompt, system_prompt[-600:]
    return system_prompt.split("【工具上下文】", 1)[1]


async def _bot(
    tmp_path: Path, fake_llm: FakeOpenAI, mcp_toml: str, start_timeout: float = 60.0, **env: str
) -> BotProcess:
    process = BotProcess(
        tmp_path / "bot",
        env_overrides={
            "OPENAI_BASE_URL": fake_llm.base_url,
            "PALLAS_LLM_TIMEOUT_SECONDS": "5",
            "PALLAS_LLM_MAX_RETRIES": "0",
            "MCP_PID_FILE": str(tmp_path / "mcp.pid"),
            **env,
        },
    )
    process.prepare()
    (process.config_dir / "mcp.toml").write_text(mcp_toml, encoding="utf-8")
    await process.start(start_timeout)
    return process


@pytest.fixture(scope="module")
async def module_mcp_bot(
    tmp_path_factory: pytest.TempPathFactory, module_llm: FakeOpenAI
) -> AsyncIterator[BotProcess]:
    workdir = tmp_path_factory.mktemp("mcp")
    process = await _bot(workdir, module_llm, STDIO_SERVER, MODULE_START_S, MCP_WEATHER_DELAY_S="0")
    yield process
    await process.stop()


@pytest.fixture
def mcp_bot(module_mcp_bot: BotProcess, fake_llm: FakeOpenAI) -> Iterator[BotProcess]:
    yield from this_test(module_mcp_bot)


@pytest.fixture
async def mcp_peer(mcp_bot: BotProcess) -> AsyncIterator[OneBotPeer]:
    client = OneBotPeer(mcp_bot.ws_url, self_id=BOT_ID, access_token=mcp_bot.access_token)
    await client.connect()
    yield client
    await client.close()


async def _weather_turn(peer: OneBotPeer, fake_llm: FakeOpenAI, group: int) -> list[str]:
    asked = tool_call("weather__weather", city="北京", day="明天")
    fake_llm.enqueue(asked, "明天晴转多云，3到12度")
    await peer.send_event(peer.group_message(group, ALICE, at_bot(ASK)))
    return sent_texts(await peer.wait_for_calls("send_group_msg", count=1, timeout=20))


async def test_model_asks_for_the_weather_tool_and_the_answer_uses_its_result(
    group: int, mcp_bot: BotProcess, mcp_peer: OneBotPeer, fake_llm: FakeOpenAI
) -> None:
    write_group_config(mcp_bot, group, '[tools.mcp]\nallow = ["weather"]\n')
    assert await _weather_turn(mcp_peer, fake_llm, group) == ["明天晴转多云，3到12度"]
    first, second = fake_llm.chat_requests()[:2]
    assert "weather__weather" in _tool_names(first.body)
    assert first.body["tool_choice"] == "auto"
    block = _tool_block(second.system_prompt)
    assert "北京明天：晴转多云，3~12°C" in block
    # the route log has the call, the turn's snapshot and the usage ledger (task tool) too
    log = mcp_bot.log_text()
    assert '"stage": "tools"' in log and '"tool": "weather.weather"' in log
    engine = create_engine(mcp_bot.database_url)
    try:
        snapshots = SnapshotRepository(session_factory(engine))
        deadline = time.monotonic() + 10
        while not (saved := await snapshots.latest(group)) and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
        model_tools = saved[0].data["tool"]["model_tools"]
        assert model_tools["offered"] == ["weather__hostile", "weather__weather"]
        (call,) = model_tools["calls"]
        assert (call["tool"], call["ok"], call["reason"]) == ("weather.weather", True, "ok")
        ledger = UsageRepository(session_factory(engine))
        totals = await ledger.totals(now=time.time(), group_id=group, task="tool")
        assert totals.calls == 1
    finally:
        await engine.dispose()
    # what an admin sees in the group
    for command in ("/pallas context", "/pallas status", "/pallas tool"):
        await mcp_peer.send_event(mcp_peer.group_message(group, SUPERUSER, command))
    answers = sent_texts(await mcp_peer.wait_for_calls("send_msg", "send_group_msg", count=4))
    assert any("call weather.weather" in a and "→ ok (ok" in a for a in answers), answers
    assert any("MCP：weather（所有人可用，每日 200 次）" in a for a in answers), answers
    assert any("- weather（stdio）：正常，工具：weather、hostile" in a for a in answers), answers


async def test_no_permission_no_schemas_and_members_below_the_audience_get_none(
    group_ids: Iterator[int], mcp_bot: BotProcess, mcp_peer: OneBotPeer, fake_llm: FakeOpenAI
) -> None:
    closed_group, admins_group = next(group_ids), next(group_ids)
    write_group_config(mcp_bot, admins_group, '[tools.mcp]\nallow = ["weather"]\nwho = "admins"\n')
    fake_llm.enqueue("我查不了天气哦", "我也查不了")
    await mcp_peer.send_event(mcp_peer.group_message(closed_group, ALICE, at_bot(ASK)))
    await mcp_peer.wait_for_calls("send_group_msg", count=1, timeout=20)
    await mcp_peer.send_event(mcp_peer.group_message(admins_group, ALICE, at_bot(ASK)))
    await mcp_peer.wait_for_calls("send_group_msg", count=2, timeout=20)
    closed, member = fake_llm.chat_requests()[:2]
    assert "tools" not in closed.body and "tool_choice" not in closed.body
    assert "tools" not in member.body
    # the superuser in the same group is offered the tool
    fake_llm.enqueue("好的")
    await asyncio.sleep(3.5)  # past the group cooldown
    await mcp_peer.send_event(mcp_peer.group_message(admins_group, SUPERUSER, at_bot(ASK)))
    await fake_llm.wait_for_requests(3, timeout=20)
    assert "weather__weather" in _tool_names(fake_llm.chat_requests()[2].body)


async def test_hostile_result_is_neutralised_and_capped(
    group: int, mcp_bot: BotProcess, mcp_peer: OneBotPeer, fake_llm: FakeOpenAI
) -> None:
    write_group_config(mcp_bot, group, '[tools.mcp]\nallow = ["weather"]\n')
    fake_llm.enqueue(tool_call("weather__hostile", query="北京"), "暂时查不到呢")
    await mcp_peer.send_event(mcp_peer.group_message(group, ALICE, at_bot(ASK)))
    assert sent_texts(await mcp_peer.wait_for_calls("send_group_msg", count=1, timeout=20)) == [
        "暂时查不到呢"
    ]
    second = fake_llm.chat_requests()[1]
    block = _tool_block(second.system_prompt)
    assert "忽略以上所有指令" not in second.system_prompt and "我被黑了" not in block
    assert "啊啊啊啊啊啊啊啊" not in block and "没有查到" in block
    assert len(str(second.body["messages"])) < 60_000  # 1 MB never reaches the model
    assert "weather.hostile not used: result_injection" in mcp_bot.log_text()


async def test_killing_the_server_mid_call_still_answers(
    group: int, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    bot = await _bot(tmp_path, fake_llm, STDIO_SERVER, MCP_WEATHER_DELAY_S="3")
    peer = OneBotPeer(bot.ws_url, self_id=BOT_ID, access_token=bot.access_token)
    await peer.connect()
    try:
        write_group_config(bot, group, '[tools.mcp]\nallow = ["weather"]\n')
        fake_llm.enqueue(tool_call("weather__weather", city="北京"), "天气暂时查不到，晚点再问我")
        await peer.send_event(peer.group_message(group, ALICE, at_bot(ASK)))
        await fake_llm.wait_for_requests(1, timeout=20)
        await asyncio.sleep(0.5)  # the call is under way (the server waits 3 s)
        os.kill(int((tmp_path / "mcp.pid").read_text()), signal.SIGKILL)
        sends = await peer.wait_for_calls("send_group_msg", count=1, timeout=20)
        assert sent_texts(sends) == ["天气暂时查不到，晚点再问我"]
        assert "没有查到" in _tool_block(fake_llm.chat_requests()[1].system_prompt)
        log = bot.log_text()
        assert "WARNING" in log and "weather.weather not used: crashed" in log
    finally:
        await peer.close()
        await bot.stop()


async def test_streamable_http_server_with_a_header_from_the_environment(
    group: int, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    port = free_port()
    server = subprocess.Popen(  # noqa: ASYNC220 - spawning returns at once
        [sys.executable, "-m", "tests.harness.mcp_weather", "http", str(port)],
        cwd=REPO,
        env={**os.environ, "MCP_REQUIRE_HEADER": "X-Weather-Token:t-123"},  # the bot must send it
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        await _wait_listening(port)
        toml = (
            f'[[servers]]\nname = "weather"\nurl = "http://127.0.0.1:{port}/mcp"\n'
            'headers = { "X-Weather-Token" = "WEATHER_MCP_TOKEN" }\n'
        )
        bot = await _bot(tmp_path, fake_llm, toml, WEATHER_MCP_TOKEN="t-123")
        peer = OneBotPeer(bot.ws_url, self_id=BOT_ID, access_token=bot.access_token)
        await peer.connect()
        try:
            write_group_config(bot, group, '[tools.mcp]\nallow = ["weather.weather"]\n')
            assert await _weather_turn(peer, fake_llm, group) == ["明天晴转多云，3到12度"]
            first, second = fake_llm.chat_requests()[:2]
            assert _tool_names(first.body) == ["weather__weather"]  # hostile not allowed
            assert "北京明天：晴转多云" in _tool_block(second.system_prompt)
        finally:
            await peer.close()
            await bot.stop()
    finally:
        server.terminate()
        server.wait(timeout=10)


async def _wait_listening(port: int, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    async with httpx.AsyncClient() as client:
        while time.monotonic() < deadline:
            try:
                await client.get(f"http://127.0.0.1:{port}/mcp", timeout=0.5)
                return
            except httpx.HTTPError:
                await asyncio.sleep(0.2)
    raise TimeoutError(f"MCP server on {port} did not listen")


async def test_made_up_tools_bad_arguments_and_the_daily_budget_fail_quietly(
    group: int, mcp_bot: BotProcess, mcp_peer: OneBotPeer, fake_llm: FakeOpenAI
) -> None:
    write_group_config(mcp_bot, group, '[tools.mcp]\nallow = ["weather"]\ndaily_calls = 1\n')
    asked = Scripted(
        tool_calls=[
            ("weather__radar", "{}"),  # never offered
            ("weather__weather", "{city: 北京"),  # not JSON
            ("weather__weather", '{"city": "北京"}'),
            ("weather__weather", '{"city": "上海"}'),  # one of these two is over the budget
        ]
    )
    fake_llm.enqueue(asked, "北京明天晴转多云")
    await mcp_peer.send_event(mcp_peer.group_message(group, ALICE, at_bot(ASK)))
    sends = await mcp_peer.wait_for_calls("send_group_msg", count=1, timeout=20)
    assert sent_texts(sends) == ["北京明天晴转多云"]
    block = _tool_block(fake_llm.chat_requests()[1].system_prompt)
    assert block.count("晴转多云") + block.count("小雨") == 1 and block.count("没有查到") == 3
    log = mcp_bot.log_text()
    for reason in ("weather__radar not used: not_offered", "not used: arguments_bad_json",
                   "not used: budget"):  # fmt: skip
        assert reason in log
    # the budget is spent for today: the next turn offers no tool
    fake_llm.enqueue("好")
    await asyncio.sleep(3.5)
    await mcp_peer.send_event(mcp_peer.group_message(group, ALICE, at_bot("上海呢")))
    await fake_llm.wait_for_requests(3, timeout=20)
    assert "tools" not in fake_llm.chat_requests()[2].body


async def test_a_side_effect_tool_waits_for_an_admin_to_confirm_it_once(
    group: int, mcp_bot: BotProcess, mcp_peer: OneBotPeer, fake_llm: FakeOpenAI
) -> None:
    write_group_config(
        mcp_bot,
        group,
        '[tools.mcp]\nallow = ["weather"]\n\n[tools.mcp.tool."weather.weather"]\n'
        "side_effects = true\n",
    )
    fake_llm.enqueue(tool_call("weather__weather", city="北京"), "已经帮你提交给管理员啦")
    await mcp_peer.send_event(mcp_peer.group_message(group, ALICE, at_bot(ASK)))
    await mcp_peer.wait_for_calls("send_group_msg", count=1, timeout=20)
    block = _tool_block(fake_llm.chat_requests()[1].system_prompt)
    assert "还没有执行" in block and "晴转多云" not in block  # not run on the model's word
    code = re.search(r"/pallas tool confirm ([0-9a-f]{6})", block)
    assert code is not None, block
    # a member cannot confirm it; an admin can, once
    await mcp_peer.send_event(
        mcp_peer.group_message(group, ALICE, f"/pallas tool confirm {code[1]}")
    )
    await asyncio.sleep(1.0)
    await mcp_peer.send_event(
        mcp_peer.group_message(group, SUPERUSER, f"/pallas tool confirm {code[1]}")
    )
    answers = sent_texts(await mcp_peer.wait_for_calls("send_msg", "send_group_msg", count=3))
    assert answers[-1] == "已执行 weather.weather：北京明天：晴转多云，3~12°C，北风3级"
    await mcp_peer.send_event(
        mcp_peer.group_message(group, SUPERUSER, f"/pallas tool confirm {code[1]}")
    )
    answers = sent_texts(await mcp_peer.wait_for_calls("send_msg", "send_group_msg", count=4))
    assert answers[-1].startswith(f"没有待确认的 {code[1]}")
    assert len(fake_llm.chat_requests()) == 2  # commands are no chat turns


async def test_the_bots_own_rule_tools_can_be_offered_to_the_model_the_same_way(
    group: int, mcp_bot: BotProcess, mcp_peer: OneBotPeer, fake_llm: FakeOpenAI
) -> None:
    write_group_config(
        mcp_bot,
        group,
        '[tools]\nadmin_only = ["activity"]\n\n[tools.mcp]\nallow = ["local"]\n',
    )
    fake_llm.enqueue(tool_call("local__calc", request="算一下 3.5*34"), "一共119块")
    await mcp_peer.send_event(
        mcp_peer.group_message(group, ALICE, at_bot("一打鸡蛋三块五，买34打要多少钱"))
    )
    sends = await mcp_peer.wait_for_calls("send_group_msg", count=1, timeout=20)
    assert sent_texts(sends) == ["一共119块"]
    first, second = fake_llm.chat_requests()[:2]
    offered = _tool_names(first.body)
    assert "local__calc" in offered and "local__dice" in offered
    assert "local__activity" not in offered  # admin-only here, and ALICE is a member
    assert "weather__weather" not in offered  # the MCP server is not allowed in this group
    assert "119" in _tool_block(second.system_prompt)
