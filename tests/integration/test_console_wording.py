"""Console wording over a real runtime: the analyzer's sources and members, memory by name."""

from __future__ import annotations

import httpx

from pallas.app_wiring import memory_service_for
from pallas.core.db.repositories.snapshots import InjectionSnapshot
from pallas.core.records import StoredMessage
from pallas.features.memory.isolation import group_scope
from pallas.runtime import PallasRuntime
from tests.integration import test_console_web as web
from tests.integration.test_console_web import BOT, GROUP, NOW, login

runtime = web.runtime
client = web.client

AMIYA, FAN = 30_001, 30_002


def said(mid: int, user: int, card: str) -> StoredMessage:
    return StoredMessage(BOT, GROUP, mid, user, NOW + mid, "在吗", card=card, nickname=f"n{user}")


async def test_the_analyzer_names_the_member_and_reads_its_sources(
    client: httpx.AsyncClient, runtime: PallasRuntime
) -> None:
    await runtime.repos.messages.add_many([said(77, AMIYA, "阿米娅")])
    data = {
        "sections": [{"id": "memory", "chars": 40, "tokens": 20, "source": "memory",
                      "memory_ids": ["mem:1", "mem:2", "worldbook:方舟#3"],
                      "source_tokens": ["memory:group_memory", "worldbook:方舟#3"]}],
        "messages": [{"role": "user", "kind": "current", "chars": 4, "tokens": 3,
                      "source_token": "current:77"}],
    }  # fmt: skip
    await runtime.repos.snapshots.save(
        InjectionSnapshot("turn-9", BOT, GROUP, AMIYA, 77, NOW, "gpt-4o-mini", "delivered", data)
    )
    await login(client)
    page = (await client.get(f"/console/g/{GROUP}/context")).text
    section = page.split('data-section="memory"')[1].split("</tr>")[0]
    assert '<span class="src" title="mem:1 mem:2">记忆 ×2</span>' in section
    assert "世界书「方舟」" in section and "记忆块·群记忆" in section
    assert "<code>mem:1</code>" not in section, "no wall of raw ids"
    assert "本条消息（阿米娅）" in page
    assert f'阿米娅（<span title="QQ 号">{AMIYA}</span>）' in page
    assert "北京时间" in page


async def test_the_memory_filter_takes_a_card_as_well_as_a_number(
    client: httpx.AsyncClient, runtime: PallasRuntime
) -> None:
    await runtime.repos.messages.add_many([said(1, AMIYA, "阿米娅"), said(2, FAN, "阿米娅的粉丝")])
    memory = memory_service_for(runtime)
    for user, text in ((AMIYA, "喜欢吃甜食"), (FAN, "住在龙门")):
        await memory.remember(
            bot_id=BOT, scope=group_scope(BOT, GROUP), kind="person_fact", text=text,
            origin="admin", subject_user_id=user,
        )  # fmt: skip
    await login(client)
    url = f"/console/g/{GROUP}/memory"
    by_card = (await client.get(url, params={"user": "阿米娅"})).text
    assert "喜欢吃甜食" in by_card and "住在龙门" not in by_card
    row = by_card.split("喜欢吃甜食")[1].split("</tr>")[0]
    assert ">管理员加的</span>" in row and f'title="QQ {AMIYA}"' in by_card
    by_number = (await client.get(url, params={"user": str(FAN)})).text
    assert "住在龙门" in by_number and "喜欢吃甜食" not in by_number
    several = (await client.get(url, params={"user": "阿米"})).text
    assert "对应多个成员" in several and f"user={FAN}" in several
    assert "喜欢吃甜食" not in several, "no member chosen: nothing listed as if it were theirs"
    nobody = (await client.get(url, params={"user": "博士"})).text
    assert "没有名片或昵称含「博士」的成员" in nobody
