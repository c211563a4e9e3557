"""packages/web_console: the web console is mounted on NoneBot's app and armed by the lifecycle."""

from __future__ import annotations

import stat

import httpx
import nonebot

from tests.plugins.conftest import Pallas


async def test_console_is_served_by_the_bot_and_armed_with_a_private_token(
    pallas: Pallas,
) -> None:
    runtime = await pallas.start()
    token_file = runtime.settings.pallas_data_dir / "console_token"
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    token = token_file.read_text(encoding="utf-8").strip()
    transport = httpx.ASGITransport(app=nonebot.get_app())
    async with httpx.AsyncClient(transport=transport, base_url="http://bot") as client:
        anonymous = await client.get("/console/")
        assert (anonymous.status_code, anonymous.headers["location"]) == (303, "/console/login")
        assert (await client.get("/console/static/vendor/htmx.min.js")).status_code == 200
        login = await client.post("/console/login", data={"token": token})
        assert login.status_code == 303 and "httponly" in login.headers["set-cookie"].lower()
        groups = await client.get("/console/")
        assert groups.status_code == 200 and "Pallas 控制台" in groups.text
