"""Console "Wrong" items of issue 28, each as the operator met it, over a real runtime."""

from __future__ import annotations

import re

import httpx
import pytest

from pallas.app_wiring import memory_service_for, memory_sources_for
from pallas.context.context import GatherRequest
from pallas.core.turn import TurnInput
from pallas.features.memory.isolation import group_scope
from pallas.runtime import PallasRuntime
from tests.integration import test_console_web as web
from tests.integration.test_console_web import BOT, GROUP, NOW, login, message

runtime = web.runtime  # the console tests' fixtures: a runtime and a logged-out client
client = web.client

ALICE = 20_011


async def test_a_logged_out_cookie_does_not_open_the_console_again(
    client: httpx.AsyncClient,
) -> None:
    csrf = await login(client)
    saved = client.cookies.get("pallas_console")
    assert saved
    assert (await client.get("/console/")).status_code == 200
    out = await client.post("/console/logout", data={"csrf": csrf})
    assert out.status_code == 303
    client.cookies.clear()
    client.cookies.set("pallas_console", saved, path="/console")
    again = await client.get("/console/")
    assert again.status_code == 303 and again.headers["location"].endswith("/console/login")
    assert (await client.get(f"/console/g/{GROUP}/memory")).status_code == 303


async def test_chinese_reads_as_chinese_on_config_and_memory_pages(
    client: httpx.AsyncClient, runtime: PallasRuntime
) -> None:
    await runtime.repos.messages.add_many([message(1, NOW)])
    path = runtime.settings.groups_dir / f"{GROUP}.toml"
    path.write_text('[learning]\nblocked_words = ["<b>脏话</b>"]\n', encoding="utf-8")
    await memory_service_for(runtime).remember(
        bot_id=BOT, scope=group_scope(BOT, GROUP), kind="group_memory", text="周五开黑",
        origin="admin", source={"command": "记住", "by": "群主"},
    )  # fmt: skip
    await login(client)
    config = (await client.get(f"/console/g/{GROUP}/config")).text
    assert "脏话" in config and "\\u810f" not in config
    assert "<b>" not in config, "still escaped for HTML"
    memory = (await client.get(f"/console/g/{GROUP}/memory")).text
    assert "记住" in memory and "群主" in memory and "\\u8bb0" not in memory


async def test_a_switched_off_section_retrieves_and_counts_nothing(
    runtime: PallasRuntime,
) -> None:
    """With person_facts switched off, 检索来源 reported the facts and their use counts rose."""
    service = memory_service_for(runtime)
    await service.remember(
        bot_id=BOT, scope=group_scope(BOT, GROUP), kind="person_facts", text="TA喜欢猫",
        origin="teach", subject_user_id=ALICE,
    )  # fmt: skip
    path = runtime.settings.groups_dir / f"{GROUP}.toml"
    path.write_text('[context]\ndisabled_processors = ["person_facts"]\n', encoding="utf-8")
    turn = TurnInput(BOT, GROUP, ALICE, 9, NOW, "我喜欢什么动物", to_me=True)
    request = GatherRequest(turn, turn.text, NOW, runtime.group_configs.get(GROUP),
                            "帕拉斯", True, False, True)  # fmt: skip
    sources = {s.name: s for s in memory_sources_for(runtime, service)}
    contribution = await sources["person_facts"].gather(request)
    await service.drain()
    assert contribution.blocks == {} and contribution.trace == {"skipped": "processor_disabled"}
    [item] = await service.repo.list_items(scopes=None, subject_user_id=ALICE)
    assert item.access_count == 0


@pytest.mark.parametrize("value", ['"nonexistent"'])
async def test_an_unknown_persona_is_refused_with_the_installed_ones(
    client: httpx.AsyncClient, runtime: PallasRuntime, value: str
) -> None:
    csrf = await login(client)
    url = f"/console/g/{GROUP}/config/value"
    refused = await client.post(url, data={"csrf": csrf, "key": "persona", "value": value})
    assert refused.status_code == 422 and "人设「nonexistent」不存在" in refused.text
    assert "pallas" in refused.text and "已保存" not in refused.text
    assert not (runtime.settings.groups_dir / f"{GROUP}.toml").exists()


async def test_the_pipeline_panel_says_which_order_is_which(
    client: httpx.AsyncClient, runtime: PallasRuntime
) -> None:
    """Dragging changed execution order while the prompt kept its sections' fixed order, and
    the panel did not say so: it now shows the prompt's order next to the execution order."""
    await runtime.repos.messages.add_many([message(1, NOW)])
    path = runtime.settings.groups_dir / f"{GROUP}.toml"
    path.write_text('[context]\ndisabled_processors = ["person_facts"]\n', encoding="utf-8")
    await login(client)
    page = (await client.get(f"/console/g/{GROUP}/pipeline")).text
    assert "执行顺序" in page and "提示词里各段的顺序是固定的" in page
    order = page.split('id="section-order"')[1]
    names = re.findall(r'data-section="([a-z_]+)"', order)
    assert names[:3] == ["guard", "persona", "self_identity"] and names[-1] == "tool_context"
    person = order.split('data-section="person_facts"')[1].split("</li>")[0]
    assert "已关闭" in person and "人物事实" in person


async def test_a_key_is_reset_to_its_default_from_the_config_page(
    client: httpx.AsyncClient, runtime: PallasRuntime
) -> None:
    path = runtime.settings.groups_dir / f"{GROUP}.toml"
    path.write_text("# keep me\n[context]\nchar_budget = 9000\n", encoding="utf-8")
    csrf = await login(client)
    page = (await client.get(f"/console/g/{GROUP}/config")).text
    assert 'name="key" value="context.char_budget"' in page, "a reset button on the group's key"
    url = f"/console/g/{GROUP}/config/reset"
    done = await client.post(url, data={"csrf": csrf, "key": "context.char_budget"})
    assert done.status_code == 200 and "已恢复默认：context.char_budget" in done.text
    assert path.read_text(encoding="utf-8") == "# keep me\n"
    again = await client.post(url, data={"csrf": csrf, "key": "context.char_budget"})
    assert again.status_code == 422 and "没有 context.char_budget" in again.text
