"""The console's 语音 page: the TTS chain (keys never shown, only whether they are set), the
switches, and 试听 — a sample synthesised by the fake TTS server and played from the page's
own URL."""

from __future__ import annotations

import re
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from pallas.app import build_app
from pallas.core.clock import FakeClock
from pallas.core.settings import PallasSettings
from pallas.core.state import MemoryStateStore
from pallas.providers.tts import wav_duration
from pallas.runtime import PallasRuntime
from pallas.web import mount_console, start_console
from tests.harness.fake_tts import FakeTts
from tests.integration.test_console_web import NOW, REPO, TOKEN, login

SECRET = "sk-voice-never-on-the-page-0050"


@pytest.fixture
async def tts() -> AsyncIterator[FakeTts]:
    server = FakeTts()
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
async def voice_client(
    tmp_path: Path, database_url: str, tts: FakeTts
) -> AsyncIterator[httpx.AsyncClient]:
    shutil.copytree(REPO / "config", tmp_path / "config")
    with (tmp_path / "config" / "groups" / "default.toml").open("a", encoding="utf-8") as out:
        out.write(
            f'\n[voice]\nenabled = true\n[[voice.providers]]\nname = "fake"\nkind = "openai"\n'
            f'base_url = "{tts.base_url}"\napi_key_env = "OPENAI_API_KEY"\nmodel = "tts-1"\n'
            f'voice = "alloy"\nresponse_format = "wav"\n'
        )
    clock = FakeClock(NOW)
    runtime = await PallasRuntime.start(
        PallasSettings(
            database_url=database_url,
            pallas_config_dir=tmp_path / "config",
            pallas_data_dir=tmp_path / "data",
            pallas_console_token=TOKEN,
            openai_api_key=SECRET,
        ),
        clock=clock,
        state=MemoryStateStore(clock),
    )
    app = FastAPI()
    pallas = build_app(runtime)
    console = mount_console(app, pallas.console_backend)
    start_console(console, runtime.settings, runtime.state, runtime.clock, "127.0.0.1", 8080)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                 base_url="http://console") as http:  # fmt: skip
        yield http
    await pallas.stop()


async def test_voice_page_lists_the_chain_and_plays_a_sample(
    voice_client: httpx.AsyncClient, tts: FakeTts
) -> None:
    csrf = await login(voice_client)
    page = (await voice_client.get("/console/voice")).text
    row = page.split('data-provider="fake"')[1].split("</tr>")[0]
    assert "tts-1" in row and "alloy" in row and "已设置" in row and "正常" in row
    assert SECRET not in page and "OPENAI_API_KEY" not in page
    assert "已开启" in page

    tried = await voice_client.post(
        "/console/voice/try", data={"csrf": csrf, "text": "博士，3点见😀", "group": "0"}
    )
    assert tried.status_code == 200
    assert tts.requests[-1].body["input"] == "博士，3点见"
    src = re.search(r'<audio controls autoplay src="([^"]+)"', tried.text)
    assert src is not None
    audio = await voice_client.get(src.group(1))
    assert audio.headers["content-type"] == "audio/wav"
    assert wav_duration(audio.content) > 0

    tts.fail_with(503)
    failed = await voice_client.post("/console/voice/try", data={"csrf": csrf, "text": "你好"})
    assert failed.status_code == 422 and "合成失败：server_error" in failed.text
    assert SECRET not in failed.text


async def test_voice_sample_needs_a_login_and_the_csrf_token(
    voice_client: httpx.AsyncClient,
) -> None:
    assert (await voice_client.get("/console/voice")).status_code in (303, 307)
    await login(voice_client)
    refused = await voice_client.post("/console/voice/try", data={"text": "你好"})
    assert refused.status_code in (400, 403)
    assert (await voice_client.get("/console/voice/sample/nope")).status_code == 404
