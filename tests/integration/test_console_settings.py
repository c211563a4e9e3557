"""Console config pages over a real runtime: keys grouped and described, global settings."""

from __future__ import annotations

import asyncio
import logging
import re
import shutil
import tomllib
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from pallas.app import build_app
from pallas.core.clock import FakeClock
from pallas.core.settings import PallasSettings
from pallas.core.state import MemoryStateStore
from pallas.runtime import PallasRuntime
from pallas.web import mount_console, start_console
from tests.integration import test_console_web as web
from tests.integration.test_console_web import GROUP, NOW, OTHER, REPO, TOKEN, login

runtime = web.runtime
client = web.client


async def test_config_keys_are_grouped_by_table_collapsed_with_descriptions(
    client: httpx.AsyncClient, runtime: PallasRuntime
) -> None:
    path = runtime.settings.groups_dir / f"{GROUP}.toml"
    path.write_text("[routing.ambient]\nrate = 0.2\n", encoding="utf-8")
    await login(client)
    page = (await client.get(f"/console/g/{GROUP}/config")).text
    groups = re.findall(r'<details class="cfg-group" data-table="([^"]*)"\s*>', page)
    assert "routing.ambient" in groups and "memory.profile" in groups, "collapsed by default"
    ambient = page.split('data-table="routing.ambient"')[1].split("</details>")[0]
    assert "主动插话：偶尔加入没人 @ 它的对话" in ambient and f"{GROUP}.toml 改了 1 项" in ambient
    assert "每条符合条件的消息触发插话的概率" in ambient
    assert 'title="chance per eligible message"' in ambient, "the English note as a tooltip"
    rate = ambient.split('data-key="routing.ambient.rate"')[1].split("</tr>")[0]
    assert ">本群文件<" in rate and ">内置默认<" in ambient, "sources in Chinese"
    assert 'name="key" value="routing.ambient.rate"' in ambient, "reset stays on the group's key"
    filtered = (await client.get(f"/console/g/{GROUP}/config", params={"q": "eligible"})).text
    assert re.findall(r'data-table="([^"]*)" open', filtered) == ["routing.ambient"]


SECRET = "sk-never-on-the-page-0451"


@pytest.fixture
async def deployed(tmp_path: Path, database_url: str) -> AsyncIterator[PallasRuntime]:
    """A deployment with a key, named models and daily caps."""
    shutil.copytree(REPO / "config", tmp_path / "config")
    clock = FakeClock(NOW)
    rt = await PallasRuntime.start(
        PallasSettings(
            database_url=database_url,
            pallas_config_dir=tmp_path / "config",
            pallas_data_dir=tmp_path / "data",
            pallas_console_token=TOKEN,
            openai_api_key=SECRET,
            pallas_chat_model="deepseek-chat",
            pallas_embedding_model="bge-m3",
            pallas_daily_call_cap=500,
        ),
        clock=clock,
        state=MemoryStateStore(clock),
    )
    yield rt
    await rt.stop()


@pytest.fixture
async def settings_client(deployed: PallasRuntime) -> AsyncIterator[httpx.AsyncClient]:
    app = FastAPI()
    console = mount_console(app, build_app(deployed).console_backend)
    start_console(console, deployed.settings, deployed.state, deployed.clock, "127.0.0.1", 8080)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://console") as http:
        yield http


async def test_global_settings_show_models_prices_and_caps_never_the_key(
    settings_client: httpx.AsyncClient, deployed: PallasRuntime
) -> None:
    default = deployed.settings.groups_dir / "default.toml"
    default.write_text(
        default.read_text("utf-8") + '\n[models."deepseek-chat"]\ninput_price = 2.0\n', "utf-8"
    )
    await login(settings_client)
    page = (await settings_client.get("/console/settings")).text
    assert SECRET not in page
    chat = page.split('data-task="chat"')[1].split("</tr>")[0]
    assert "deepseek-chat" in chat and "2.0" in chat, "the chat model with its price"
    assert "bge-m3" in page.split('data-task="embedding"')[1].split("</tr>")[0]
    assert "未开启" in page.split('data-task="transcribe"')[1].split("</tr>")[0]
    caps = page.split('id="caps"')[1].split("</section>")[0]
    assert "/ 上限 500" in caps and "没有上限" in caps and "600" in caps  # calls, tokens, budget
    assert 'data-table="routing.ambient"' in page, "default.toml's keys, grouped"


async def test_default_toml_edits_are_validated_and_logged(
    settings_client: httpx.AsyncClient, deployed: PallasRuntime, caplog: pytest.LogCaptureFixture
) -> None:
    groups = deployed.settings.groups_dir
    (groups / f"{GROUP}.toml").write_text("[routing.gate]\nsilence_min_s = 200\n", "utf-8")
    before = (groups / "default.toml").read_text("utf-8")
    csrf = await login(settings_client)
    caplog.set_level(logging.INFO, logger="pallas.console")

    async def put(key: str, value: str) -> httpx.Response:
        form = {"csrf": csrf, "key": key, "value": value}
        return await settings_client.post("/console/settings/value", data=form)

    bad = await put("routing.ambient.rate", "7")
    assert bad.status_code == 422 and "未保存" in bad.text
    breaks_group = await put("routing.gate.silence_max_s", "100")  # under the group's min 200
    assert breaks_group.status_code == 422 and f"{GROUP}.toml" in breaks_group.text
    assert (groups / "default.toml").read_text("utf-8") == before, "nothing written"
    good = await put("cost.budget.chat_calls", '"300"')
    assert good.status_code == 200 and "已保存" in good.text
    saved = tomllib.loads((groups / "default.toml").read_text("utf-8"))
    assert saved["cost"]["budget"]["chat_calls"] == 300, "kept a number"
    assert "console: default.toml cost.budget.chat_calls = " in caplog.text
    await asyncio.sleep(1.1)  # the store re-reads files at most once a second
    assert deployed.group_configs.get(OTHER).cost.budget.chat_calls == 300, "every group"
    reset = await settings_client.post(
        "/console/settings/reset", data={"csrf": csrf, "key": "cost.budget.chat_calls"}
    )
    assert reset.status_code == 200
    after = tomllib.loads((groups / "default.toml").read_text("utf-8"))
    assert "chat_calls" not in after.get("cost", {}).get("budget", {})


async def test_model_tasks_read_in_chinese_on_status_and_usage(
    settings_client: httpx.AsyncClient,
) -> None:
    await login(settings_client)
    for path in ("/console/status", "/console/usage"):
        page = (await settings_client.get(path)).text
        assert '<span title="chat">回复</span>' in page, path
        assert '<span title="cheap">便宜任务（抽取记忆、学习、摘要）</span>' in page, path
    status = (await settings_client.get("/console/status")).text
    line = "向量检索：开启（bge-m3，PALLAS_EMBEDDING_MODEL 指定）"
    assert f'<p class="muted" id="embeddings">{line}' in status


async def test_the_status_page_lists_the_mcp_servers_without_starting_them(
    deployed: PallasRuntime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 31: the console shows the MCP servers, their state and what they lack."""
    monkeypatch.delenv("WEATHER_API_KEY", raising=False)
    (deployed.settings.pallas_config_dir / "mcp.toml").write_text(
        '[[servers]]\nname = "weather"\ncommand = "no-such-mcp-server"\n'
        'env = ["WEATHER_API_KEY"]\n',
        encoding="utf-8",
    )
    app = FastAPI()
    console = mount_console(app, build_app(deployed).console_backend)
    start_console(console, deployed.settings, deployed.state, deployed.clock, "127.0.0.1", 8080)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://console"
    ) as http:
        await login(http)
        page = (await http.get("/console/status")).text
    row = page.split('data-server="weather"')[1].split("</tr>")[0]
    assert "stdio" in row and "未启动" in row
    assert "未设置环境变量：WEATHER_API_KEY" in row
    assert "第一次使用时启动后列出" in row


def test_mcp_server_states_read_in_chinese() -> None:
    from pallas.features.tools import ServerStatus
    from pallas.web.status import mcp_views

    ready = ServerStatus("weather", "stdio", "ready", ("weather", "forecast"), 0, "", ())
    resting = ServerStatus("search", "http", "resting", (), 3, "connection refused", ())
    views = mcp_views([ready, resting])
    assert [(v.state, v.healthy, v.tools) for v in views] == [
        ("正常", True, "weather、forecast"),
        ("故障（稍后重试）", False, ""),
    ]
    assert views[1].problem == "connection refused"
