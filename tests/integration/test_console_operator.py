"""Console pages an operator acts from (issue 28): the group overview and its pause switch,
personas, worldbooks, the log tail and the message history, over a real runtime."""

from __future__ import annotations

import json
import logging
import re

import httpx
import pytest

from pallas.core.log_ring import LOG_RING
from pallas.core.records import StoredMessage
from pallas.runtime import PallasRuntime
from tests.integration import test_console_web as web
from tests.integration.test_console_web import BOT, GROUP, NOW, OTHER, login, message

runtime = web.runtime
client = web.client

BOOK = {
    "entries": {
        "0": {"uid": 0, "key": ["龙门"], "content": "龙门是移动城市。", "comment": "龙门"},
        "1": {"uid": 1, "key": ["罗德岛"], "content": "罗德岛是制药公司。"},
    }
}


def said(
    mid: int, at: float, user: int, text: str, *, card: str = "", nickname: str = ""
) -> StoredMessage:
    return StoredMessage(BOT, GROUP, mid, user, at, text, card=card, nickname=nickname)


def field(page: str, name: str) -> str:
    """The value of a text input / textarea of the page."""
    found = re.search(rf'name="{name}" value="([^"]*)"', page) or re.search(
        rf'<textarea name="{name}"[^>]*>(.*?)</textarea>', page, re.S
    )
    assert found, name
    return found.group(1)


async def test_a_group_id_that_is_no_number_or_never_seen_gets_a_chinese_404(
    client: httpx.AsyncClient, runtime: PallasRuntime
) -> None:
    await runtime.repos.messages.add_many([message(1, NOW)])
    await login(client)
    for path in ("/console/g/abc", "/console/g/abc/routing", "/console/g/abc/config"):
        page = await client.get(path)
        assert page.status_code == 404 and page.headers["content-type"].startswith("text/html")
        assert "「abc」不是群号" in page.text and "detail" not in page.text
    unseen = await client.get("/console/g/999999")
    assert unseen.status_code == 404 and "还没有在群 999999 里见过任何消息" in unseen.text
    assert "暂停本群" not in unseen.text and "csrf" not in unseen.text.split("<main>")[1]


async def test_the_overview_shows_today_and_pausing_writes_enabled_false_with_the_audit_line(
    client: httpx.AsyncClient, runtime: PallasRuntime, caplog: pytest.LogCaptureFixture
) -> None:
    await runtime.repos.messages.add_many(
        [message(1, NOW - 86_400), message(2, NOW - 60), message(3, NOW - 30, is_bot=True)]
    )
    path = runtime.settings.groups_dir / f"{GROUP}.toml"
    path.write_text("# keep me\n", encoding="utf-8")
    csrf = await login(client)
    groups = (await client.get("/console/")).text
    assert f'href="/console/g/{GROUP}"' in groups, "clicking a group opens its overview"
    page = (await client.get(f"/console/g/{GROUP}")).text
    assert re.search(r'id="today-messages">1<', page) and re.search(r'id="today-replies">1<', page)
    assert re.search(r"id=\"last-activity\">12-01 11:3\d", page), "last activity"
    for tab in ("routing", "context", "memory", "config", "messages"):
        assert f'href="/console/g/{GROUP}/{tab}"' in page

    assert (
        await client.post(f"/console/g/{GROUP}/enabled", data={"enabled": "false"})
    ).status_code == 403
    caplog.set_level(logging.INFO, logger="pallas.console")
    paused = await client.post(
        f"/console/g/{GROUP}/enabled", data={"csrf": csrf, "enabled": "false"}
    )
    assert paused.status_code == 303
    assert path.read_text(encoding="utf-8") == "# keep me\nenabled = false\n"
    assert f"console: group {GROUP} config enabled = false" in caplog.text
    page = (await client.get(paused.headers["location"])).text
    assert "已暂停" in page and 'id="resume"' in page
    await client.post(f"/console/g/{GROUP}/enabled", data={"csrf": csrf, "enabled": "true"})
    assert "enabled = true" in path.read_text(encoding="utf-8")


async def test_a_bad_persona_value_is_refused_in_chinese_and_the_form_keeps_the_text(
    client: httpx.AsyncClient, runtime: PallasRuntime, caplog: pytest.LogCaptureFixture
) -> None:
    persona = runtime.settings.personas_dir / "pallas.toml"
    before = persona.read_text(encoding="utf-8")
    csrf = await login(client)
    listing = (await client.get("/console/personas")).text
    assert 'data-persona="pallas"' in listing and "帕拉斯" in listing and "默认" in listing
    page = (await client.get("/console/personas/pallas")).text
    assert "你是帕拉斯" in page.split('id="persona-preview"')[1], "the system prompt preview"
    form = {k: field(page, k) for k in ("name", "bot_label", "other_bot_label",
                                        "assistant_label", "quote_label", "aliases", "base",
                                        "self_identity")}  # fmt: skip
    typed = {**form, "csrf": csrf, "name": "", "base": "你是一只猫娘，说话带喵。"}
    refused = await client.post("/console/personas/pallas/form", data=typed)
    assert refused.status_code == 422 and "名字（name）：不能为空" in refused.text
    assert "你是一只猫娘，说话带喵。" in field(refused.text, "base"), "what was typed is kept"
    assert persona.read_text(encoding="utf-8") == before

    caplog.set_level(logging.INFO, logger="pallas.console")
    good = {**typed, "name": "小猫"}
    saved = await client.post("/console/personas/pallas/form", data=good)
    assert saved.status_code == 200 and "已保存" in saved.text
    text = persona.read_text(encoding="utf-8")
    assert 'name = "小猫"' in text and "你是一只猫娘" in text and "# Persona pack" in text
    assert "你是一只猫娘，说话带喵。" in saved.text.split('id="persona-preview"')[1]
    assert "console: persona pallas name = '小猫'" in caplog.text
    bad_file = await client.post(
        "/console/personas/pallas/file", data={"csrf": csrf, "text": 'aliases = "牛牛"\n'}
    )
    assert bad_file.status_code == 422 and "别名（aliases）：应该是列表" in bad_file.text
    assert "aliases = &#34;牛牛&#34;" in bad_file.text
    missing = await client.get("/console/personas/..%2Fgroups%2Fdefault")
    assert missing.status_code == 404


async def test_a_sillytavern_book_is_imported_sanitised_and_switched_on_per_group(
    client: httpx.AsyncClient, runtime: PallasRuntime, caplog: pytest.LogCaptureFixture
) -> None:
    await runtime.repos.messages.add_many([message(1, NOW)])
    csrf = await login(client)
    books = runtime.settings.worldbooks_dir
    upload = {"book": ("../../方舟 lore!.json", json.dumps(BOOK).encode(), "application/json")}
    done = await client.post("/console/worldbooks/import", data={"csrf": csrf}, files=upload)
    assert done.status_code == 200 and "已导入世界书「方舟_lore」：2 个条目" in done.text
    assert (books / "方舟_lore.json").is_file() and not (
        runtime.settings.pallas_config_dir.parent / "方舟 lore!.json"
    ).exists()
    again = await client.post("/console/worldbooks/import", data={"csrf": csrf}, files=upload)
    assert again.status_code == 422 and "已经有名为「方舟_lore」的世界书" in again.text
    junk = {"book": ("x.json", b'{"name": "not a book"}', "application/json")}
    bad = await client.post("/console/worldbooks/import", data={"csrf": csrf}, files=junk)
    assert bad.status_code == 422 and "不是可用的 SillyTavern 世界书" in bad.text
    huge = {"book": ("big.json", b" " * 2_100_000, "application/json")}
    assert (
        await client.post("/console/worldbooks/import", data={"csrf": csrf}, files=huge)
    ).status_code == 413
    assert sorted(p.name for p in books.glob("*.json")) == ["方舟_lore.json"]

    caplog.set_level(logging.INFO, logger="pallas.console")
    toggle = {"csrf": csrf, "group": str(GROUP), "book": "方舟_lore", "on": "true"}
    on = await client.post("/console/worldbooks/toggle", data=toggle)
    assert on.status_code == 200 and "已启用" in on.text
    group_file = (runtime.settings.groups_dir / f"{GROUP}.toml").read_text(encoding="utf-8")
    assert 'books = ["方舟_lore"]' in group_file
    assert f"console: group {GROUP} config worldbook.books = ['方舟_lore']" in caplog.text
    listing = (await client.get("/console/worldbooks")).text
    row = listing.split('data-book="方舟_lore"')[1].split("</tr>")[0]
    assert f">{GROUP}</a>" in row and "SillyTavern" in row
    off = await client.post("/console/worldbooks/toggle", data={**toggle, "on": "false"})
    assert off.status_code == 200
    assert "books = []" in (runtime.settings.groups_dir / f"{GROUP}.toml").read_text("utf-8")


async def test_the_log_tail_filters_by_group_and_never_shows_a_key(
    client: httpx.AsyncClient,
) -> None:
    LOG_RING.clear()
    LOG_RING.add("INFO", f"12-01 11:33:00 [INFO] pallas.turn | group {GROUP}: replied to 101")
    LOG_RING.add("INFO", f"12-01 11:33:01 [INFO] pallas.turn | group {OTHER}: replied to 102")
    LOG_RING.add(
        "WARNING", "12-01 11:33:02 [WARNING] httpx | Authorization: Bearer sk-live1234567890abc"
    )
    await login(client)
    page = (await client.get("/console/logs")).text
    assert f"group {GROUP}: replied" in page and f"group {OTHER}: replied" in page
    assert "sk-live1234567890abc" not in page and "Bearer ***" in page
    mine = (await client.get("/console/logs", params={"group": str(GROUP)})).text
    assert f"group {GROUP}: replied" in mine and f"group {OTHER}: replied" not in mine
    polled = await client.get("/console/logs", params={"auto": "1"}, headers={"HX-Request": "true"})
    assert polled.text.startswith('<pre class="log"') and "<html" not in polled.text


async def test_message_history_is_newest_first_searchable_and_names_members(
    client: httpx.AsyncClient, runtime: PallasRuntime
) -> None:
    rows = [
        said(i, NOW - 1000 + i, 100 + i % 2, f"第{i}条" + (" 开黑" if i % 10 == 0 else ""),
             card="阿米娅" if i % 2 == 0 else "", nickname="凯尔希")
        for i in range(1, 61)
    ]  # fmt: skip
    await runtime.repos.messages.add_many(rows)
    await login(client)
    page = (await client.get(f"/console/g/{GROUP}/messages")).text
    shown = re.findall(r'data-message="(\d+)"', page)
    assert shown[:3] == ["60", "59", "58"] and len(shown) == 50 and 'id="older"' in page
    assert "阿米娅" in page and "凯尔希" in page and ">100</a>" in page
    older = (await client.get(f"/console/g/{GROUP}/messages", params={"page": "2"})).text
    assert re.findall(r'data-message="(\d+)"', older)[-1] == "1"
    found = (await client.get(f"/console/g/{GROUP}/messages", params={"q": "开黑"})).text
    assert re.findall(r'data-message="(\d+)"', found) == ["60", "50", "40", "30", "20", "10"]
    member = (
        await client.get(f"/console/g/{GROUP}/messages", params={"q": "开黑", "user": "101"})
    ).text
    assert re.findall(r'data-message="(\d+)"', member) == []
    member = (await client.get(f"/console/g/{GROUP}/messages", params={"user": "101"})).text
    names = set(re.findall(r'<span class="who">([^<]+)</span>', member))
    assert names == {"凯尔希"}
    literal = (await client.get(f"/console/g/{GROUP}/messages", params={"q": "%"})).text
    assert "没有符合条件的消息" in literal


async def test_the_config_page_of_a_group_never_seen_says_so(
    client: httpx.AsyncClient, runtime: PallasRuntime
) -> None:
    await runtime.repos.messages.add_many([message(1, NOW)])
    await login(client)
    unseen = (await client.get("/console/g/999999/config")).text
    assert "机器人还没有在群 999999 里见过任何消息" in unseen
    seen = (await client.get(f"/console/g/{GROUP}/config")).text
    assert "还没有在群" not in seen
