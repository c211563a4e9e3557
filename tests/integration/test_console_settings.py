"""Console config pages over a real runtime: keys grouped and described, global settings."""

from __future__ import annotations

import re

import httpx

from pallas.runtime import PallasRuntime
from tests.integration import test_console_web as web
from tests.integration.test_console_web import GROUP, login

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
    assert "Ambient perception" in ambient and "本群改了 1 项" in ambient
    assert "chance per eligible message" in ambient
    assert 'name="key" value="routing.ambient.rate"' in ambient, "reset stays on the group's key"
    filtered = (await client.get(f"/console/g/{GROUP}/config", params={"q": "eligible"})).text
    assert re.findall(r'data-table="([^"]*)" open', filtered) == ["routing.ambient"]
