"""The 模型 page over a real runtime with no key: the checklist says replies are off; a wrong
key is refused in Chinese; the right one answers; 保存 writes data/secrets.toml (0600), never
shows the key back, and the running LLM client uses it on its next call — no restart."""

from __future__ import annotations

import asyncio
import re
import shutil
import stat
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import text

from pallas.app import build_app
from pallas.app_wiring import cost_guard_for
from pallas.core.clock import FakeClock
from pallas.core.settings import PallasSettings
from pallas.core.state import MemoryStateStore
from pallas.runtime import PallasRuntime
from pallas.web import mount_console, start_console
from tests.harness.fake_openai import FakeOpenAI

REPO = Path(__file__).resolve().parents[2]
TOKEN = "model-page-token"
KEY = "sk-right-key-7f3a"
NOW = 1_764_560_000.0


@pytest.fixture
async def fake() -> AsyncIterator[FakeOpenAI]:
    server = FakeOpenAI(default_reply="在的")
    server.api_key = KEY
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
async def runtime(tmp_path: Path) -> AsyncIterator[PallasRuntime]:
    shutil.copytree(REPO / "config", tmp_path / "config")
    clock = FakeClock(NOW)
    settings = PallasSettings.model_validate(
        {
            "database_url": f"sqlite+aiosqlite:///{tmp_path / 'pallas.db'}",
            "pallas_config_dir": tmp_path / "config",
            "pallas_data_dir": tmp_path / "data",
            "pallas_console_token": TOKEN,
            "pallas_llm_max_retries": 0,
            "openai_api_key": "",  # as .env.example ships it: empty counts as unset
        }
    )
    rt = await PallasRuntime.start(settings, clock=clock, state=MemoryStateStore(clock))
    yield rt
    await rt.stop()


@pytest.fixture
async def client(runtime: PallasRuntime) -> AsyncIterator[httpx.AsyncClient]:
    app = FastAPI()
    console = mount_console(app, build_app(runtime).console_backend)
    start_console(console, runtime.settings, runtime.state, runtime.clock, "0.0.0.0", 8080)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://console") as http:
        assert (await http.post("/console/login", data={"token": TOKEN})).status_code == 303
        yield http


async def csrf(http: httpx.AsyncClient) -> str:
    page = (await http.get("/console/model")).text
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    assert found
    return found.group(1)


def form(fake: FakeOpenAI, key: str, token: str) -> dict[str, str]:
    return {
        "csrf": token,
        "base_url": fake.base_url,
        "api_key": key,
        "chat": "deepseek-chat",
        "cheap": "deepseek-chat",
        "vision": "",
        "embedding": "",
        "chosen": "deepseek",
    }


def checklist(page: str) -> dict[str, str]:
    return dict(re.findall(r'data-check="(\w+)" data-ok="(yes|no)"', page))


async def test_from_no_key_to_an_answer_without_a_restart(
    client: httpx.AsyncClient, runtime: PallasRuntime, fake: FakeOpenAI
) -> None:
    status = (await client.get("/console/status")).text
    assert "回复已关闭" in status.split('id="replies"')[1].split("</p>")[0]
    assert checklist(status) == {"model": "no", "account": "no", "superuser": "no",
                                 "token": "no", "group": "no"}  # fmt: skip
    assert "ws://127.0.0.1:8080/onebot/v11/ws" in status and "LLOneBot" in status
    assert not runtime.llm.enabled

    preset = (await client.get("/console/model", params={"preset": "deepseek"})).text
    assert 'value="https://api.deepseek.com/v1"' in preset and 'value="deepseek-chat"' in preset

    token = await csrf(client)
    assert (await client.post("/console/model/test", data=form(fake, KEY, ""))).status_code == 403

    wrong = (await client.post("/console/model/test", data=form(fake, "sk-wrong", token))).text
    assert 'data-ok="no"' in wrong and "API Key 被拒绝（HTTP 401）" in wrong
    right = (await client.post("/console/model/test", data=form(fake, KEY, token))).text
    assert 'data-ok="yes"' in right and re.search(r"deepseek-chat 在 \d+ 毫秒内回答了", right)
    assert KEY not in right, "the typed key is never sent back"

    saved = await client.post("/console/model/save", data=form(fake, KEY, token))
    assert saved.status_code == 200 and "已保存，立即生效" in saved.text
    assert KEY not in saved.text and "…3a" not in saved.text and "…7f3a" in saved.text
    secrets = runtime.settings.pallas_data_dir / "secrets.toml"
    assert stat.S_IMODE(secrets.stat().st_mode) == 0o600
    assert KEY in secrets.read_text(encoding="utf-8")
    assert not list((REPO / "config").rglob("secrets*")), "never under config/"

    assert runtime.llm.enabled  # the same client, a new endpoint set
    result = await runtime.llm.complete(
        "chat", [{"role": "user", "content": "在吗"}], bot_id=1, group_id=2
    )
    assert result.ok and result.text == "在的" and result.model == "deepseek-chat"
    assert fake.chat_requests()[-1].headers["authorization"] == f"Bearer {KEY}"

    status = (await client.get("/console/status")).text
    assert "回复已开启" in status.split('id="replies"')[1].split("</p>")[0]
    assert checklist(status)["model"] == "yes"
    model = (await client.get("/console/model")).text
    assert "控制台保存" in model.split('data-field="api_key"')[1].split("</tr>")[0]

    # an empty key field keeps the saved key for the same address, never for another one
    again = await client.post("/console/model/save", data=form(fake, "", token))
    assert "已保存" in again.text and KEY in secrets.read_text(encoding="utf-8")
    moved = {**form(fake, "", token), "base_url": "https://api.example.com/v1"}
    refused = await client.post("/console/model/save", data=moved)
    assert refused.status_code == 422 and "请填写 API Key" in refused.text


async def test_bad_input_is_refused_like_the_settings_page(
    client: httpx.AsyncClient, fake: FakeOpenAI
) -> None:
    token = await csrf(client)
    bad = {**form(fake, KEY, token), "base_url": "ftp://x", "chat": "has space"}
    page = await client.post("/console/model/save", data=bad)
    assert page.status_code == 422 and "未保存" in page.text
    assert "接口地址要以 http" in page.text and "对话模型名不能有空格" in page.text


async def test_unreachable_and_unknown_model_read_in_chinese(
    client: httpx.AsyncClient, fake: FakeOpenAI
) -> None:
    token = await csrf(client)
    gone = {**form(fake, KEY, token), "base_url": "http://127.0.0.1:9/v1"}
    assert "连不上" in (await client.post("/console/model/test", data=gone)).text


async def test_version_and_a_database_migrated_by_a_newer_release(
    client: httpx.AsyncClient, runtime: PallasRuntime
) -> None:
    status = (await client.get("/console/status")).text
    version = status.split('id="version"')[1].split("</p>")[0]
    assert re.search(r"<b>\d+\.\d+\.\d+", version)
    assert "与本版本一致" in status and 'id="schema-alert"' not in status
    async with runtime.sessions() as session:  # a newer release's process migrated further
        await session.execute(
            text("INSERT INTO alembic_version (version_num) VALUES ('0099_from_the_future')")
        )
        await session.commit()
    status = (await client.get("/console/status")).text
    alert = status.split('id="schema-alert"')[1].split("</p>")[0]
    assert "更新的版本迁移" in alert and "0099_from_the_future" in alert
    assert "pallas restore" in alert


async def test_superusers_and_a_generated_token_are_saved_for_the_next_start(
    client: httpx.AsyncClient, runtime: PallasRuntime
) -> None:
    token = await csrf(client)
    bad = await client.post("/console/model/superusers", data={"csrf": token, "ids": "1 x"})
    assert bad.status_code == 422 and "QQ 号只能是" in bad.text
    page = await client.post(
        "/console/model/superusers", data={"csrf": token, "ids": "10001，10002"}
    )
    assert "重启机器人后生效" in page.text
    row = page.text.split('data-field="superusers"')[1].split("</tr>")[0]
    assert "10001、10002" in row and "重启后生效" in row
    made = await client.post("/console/model/token", data={"csrf": token})
    shown = re.search(r'id="new-token">[^<]*<code class="wrap">([^<]+)</code>', made.text)
    assert shown, "a generated token is shown once"
    saved = (runtime.settings.pallas_data_dir / "secrets.toml").read_text(encoding="utf-8")
    assert shown.group(1) in saved and 'superusers = "10001,10002"' in saved
    again = (await client.get("/console/model")).text
    assert shown.group(1) not in again, "and never again"
    assert (await client.post("/console/model/token", data={})).status_code == 403


async def test_backups_are_edited_and_keyed_on_the_page_and_applied_at_once(
    client: httpx.AsyncClient, runtime: PallasRuntime, fake: FakeOpenAI
) -> None:
    token = await csrf(client)
    refused = await client.post(
        "/console/model/providers",
        data={"csrf": token, "text": '[[chat]]\nname = "b"\nbase_url = "x"\napi_key = "k"\n'},
    )
    assert refused.status_code == 422 and "providers.toml" in refused.text
    text = f'[[chat]]\nname = "spare"\nbase_url = "{fake.base_url}"\napi_key_env = "SPARE_KEY"\n'
    saved = await client.post("/console/model/providers", data={"csrf": token, "text": text})
    assert "已保存 providers.toml，立即生效" in saved.text
    row = saved.text.split('data-backup="chat:spare"')[1].split("</tr>")[0]
    assert "未设置：这个备用接口被跳过" in row
    assert [e.name for e in runtime.llm.chain("chat")] == ["primary"]
    keyed = await client.post(
        "/console/model/backup-key", data={"csrf": token, "variable": "SPARE_KEY", "key": KEY}
    )
    assert "已保存 SPARE_KEY，立即生效" in keyed.text and KEY not in keyed.text
    assert "控制台保存" in keyed.text.split('data-backup="chat:spare"')[1].split("</tr>")[0]
    spare = runtime.llm.chain("chat")[1]
    assert (spare.name, spare.api_key, spare.base_url) == ("spare", KEY, fake.base_url)
    other = await client.post(
        "/console/model/backup-key", data={"csrf": token, "variable": "NOT_NAMED", "key": "k"}
    )
    assert other.status_code == 422
    tested = await client.post(
        "/console/model/backup-test", data={"csrf": token, "task": "chat", "name": "spare"}
    )
    probe = tested.text.split('class="notice backup-probe"')[1].split("</p>")[0]
    assert 'data-ok="yes"' in probe and "毫秒内回答了" in probe


async def test_services_built_before_a_save_follow_it(
    client: httpx.AsyncClient, runtime: PallasRuntime, fake: FakeOpenAI
) -> None:
    guard = cost_guard_for(runtime)  # built at start-up, like every service
    assert guard.cheap_model_of is not None and guard.cheap_model_of() is None  # same as chat
    token = await csrf(client)
    cheaper = {**form(fake, KEY, token), "cheap": "deepseek-lite"}
    assert "已保存" in (await client.post("/console/model/save", data=cheaper)).text
    assert guard.cheap_model_of() == "deepseek-lite", "the cost ladder's cheap step follows"
    assert runtime.llm.model_for("cheap") == "deepseek-lite"


async def test_a_saved_model_gets_its_embeddings_probed_again(
    client: httpx.AsyncClient, runtime: PallasRuntime, fake: FakeOpenAI
) -> None:
    assert not runtime.llm.embeddings.on  # no key at start: off
    fake.models = ["BAAI/bge-m3"]  # an unknown host: its model list is asked
    token = await csrf(client)
    assert "已保存" in (await client.post("/console/model/save", data=form(fake, KEY, token))).text
    for _ in range(100):  # the probe runs in the background, a call or two
        if runtime.llm.embeddings.on:
            break
        await asyncio.sleep(0.05)
    assert runtime.llm.embeddings.model == "BAAI/bge-m3"
    vectors = await runtime.llm.embed(["你好"], bot_id=1, group_id=2)
    assert len(vectors) == 1 and fake.embedding_requests()[-1].body["model"] == "BAAI/bge-m3"
    status = (await client.get("/console/status")).text
    assert "BAAI/bge-m3" in status.split('id="embeddings"')[1].split("</p>")[0]
