"""The status page says how many OneBot frames the edge refused, by kind, and where they are
kept (issue 44); nothing when none was."""

from __future__ import annotations

import shutil
from collections import Counter
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

REPO = Path(__file__).resolve().parents[2]
TOKEN = "refused-console-token"


@pytest.fixture
async def runtime(tmp_path: Path) -> AsyncIterator[PallasRuntime]:
    shutil.copytree(REPO / "config", tmp_path / "config")
    clock = FakeClock(1_764_560_000.0)
    rt = await PallasRuntime.start(
        PallasSettings(
            database_url=f"sqlite+aiosqlite:///{tmp_path / 'p.db'}",
            pallas_config_dir=tmp_path / "config",
            pallas_data_dir=tmp_path / "data",
            pallas_console_token=TOKEN,
        ),
        clock=clock,
        state=MemoryStateStore(clock),
    )
    yield rt
    await rt.stop()


async def _status_page(runtime: PallasRuntime, refused: Counter[str]) -> str:
    app = FastAPI()
    console = mount_console(app, build_app(runtime).console_backend)
    start_console(
        console,
        runtime.settings,
        runtime.state,
        runtime.clock,
        "127.0.0.1",
        8080,
        refused_frames=lambda: refused,
    )
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://console") as http:
        assert (await http.post("/console/login", data={"token": TOKEN})).status_code == 303
        return (await http.get("/console/status")).text


async def test_refused_frames_are_counted_on_the_status_page(runtime: PallasRuntime) -> None:
    refused: Counter[str] = Counter()
    assert 'id="refused"' not in await _status_page(runtime, refused)
    refused.update({"frame:not_json": 3, "event:message:user_id": 2})
    page = await _status_page(runtime, refused)
    assert "启动以来拒收了 5 个 OneBot 帧" in page
    assert "不是 JSON 3" in page and "message 事件（user_id） 2" in page
    assert "data/refused/frames.jsonl" in page
