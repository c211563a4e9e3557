"""Admin memory commands and the embedding path, over a real runtime."""

from __future__ import annotations

import json
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from pallas.admin import AdminContext, find_command
from pallas.app_wiring import admin_services_for, memory_service_for, memory_sources_for
from pallas.context.context import GatherRequest
from pallas.core.clock import FakeClock
from pallas.core.settings import PallasSettings
from pallas.core.state import MemoryStateStore
from pallas.core.turn import TurnInput
from pallas.features.memory.isolation import group_scope
from pallas.features.memory_commands.member_commands import (
    REPLY_ABOUT_OTHERS,
    handle_member_message,
)
from pallas.runtime import PallasRuntime
from tests.harness.fake_openai import FakeOpenAI

REPO = Path(__file__).resolve().parents[2]
BOT, A, B = 7, 100, 200
ADMIN, ALICE = 10_001, 20_011


async def start(
    tmp_path: Path, fake_llm: FakeOpenAI, database_url: str, **settings: object
) -> PallasRuntime:
    shutil.copytree(REPO / "config", tmp_path / "config")
    (tmp_path / "config" / "groups" / f"{A}.toml").write_text(
        # expansion (on by default) would answer from the fake model's queue in the background
        '[memory]\nshared_pools = ["arknights"]\n[memory.expansion]\nenabled = false\n',
        encoding="utf-8",
    )
    clock = FakeClock()
    return await PallasRuntime.start(
        PallasSettings(
            database_url=database_url,
            pallas_config_dir=tmp_path / "config",
            openai_api_key="sk-test",
            openai_base_url=fake_llm.base_url,
            **settings,
        ),
        clock=clock,
        state=MemoryStateStore(clock),
        llm_http_client=fake_llm.http_client(),
    )


@pytest.fixture
async def runtime(
    tmp_path: Path, fake_llm: FakeOpenAI, database_url: str
) -> AsyncIterator[PallasRuntime]:
    rt = await start(tmp_path, fake_llm, database_url)
    yield rt
    await rt.stop()


async def admin(rt: PallasRuntime, group: int, *args: str) -> str:
    command = find_command("memory")
    assert command is not None
    return await command.handler(
        AdminContext(
            admin_services_for(rt, memory=memory_service_for(rt)), BOT, group, ADMIN, tuple(args)
        )
    )


async def test_admin_add_list_delete_in_own_group_only(runtime: PallasRuntime) -> None:
    added = await admin(runtime, A, "add", "event", "十月二号", "在杭州办了线下聚会")
    assert added.startswith("记下了：mem:1 群事件") and "十月二号 在杭州办了线下聚会" in added
    assert (await admin(runtime, A, "add", "event", "十月二号 在杭州办了线下聚会")).startswith(
        "已经记着了"
    )
    pooled = await admin(runtime, A, "add", "ip", "pool:arknights", "能天使是企鹅物流的干员")
    assert "[pool:arknights]" in pooled
    refused = await admin(runtime, B, "add", "ip", "pool:arknights", "偷偷写进别人的池子")
    assert "没有配置共享池" in refused
    assert "类型只能是" in await admin(runtime, A, "add", "fact", "管理员不能替人写偏好")

    listing = await admin(runtime, A, "list")
    assert "mem:1" in listing and "能天使" in listing
    assert await admin(runtime, B, "list") == "这里还没有记住什么"
    assert "mem:1" not in await admin(runtime, A, "list", "ip")

    assert "没找到" in await admin(runtime, B, "del", "mem:1"), "group B cannot delete A's rows"
    assert await admin(runtime, A, "del", "mem:1") == "已删除：mem:1"
    assert "mem:1" not in await admin(runtime, A, "list")


async def test_admin_forget_and_member_forget(runtime: PallasRuntime) -> None:
    service = memory_service_for(runtime)
    taught = TurnInput(BOT, A, ALICE, 5, 1.0, "记住 我喜欢猫", to_me=True)
    assert await handle_member_message(service, taught) == "记住啦～"
    assert await handle_member_message(service, taught) == "这个我早就记着啦"
    listing = await admin(runtime, A, "list", "fact", str(ALICE))
    assert "TA喜欢猫" in listing
    assert await admin(runtime, A, "forget", str(ALICE)) == f"已忘掉 {ALICE} 的 1 条记忆"
    forget = TurnInput(BOT, A, ALICE, 6, 1.0, "忘记我", to_me=True)
    assert await handle_member_message(service, forget) == "我这里本来就没记着你的什么事哦"
    other = TurnInput(BOT, A, ALICE, 7, 1.0, "记住 群主最帅", to_me=True)
    assert await handle_member_message(service, other) == REPLY_ABOUT_OTHERS, "about someone else"
    assert await admin(runtime, A, "list") == "这里还没有记住什么"


async def test_admin_sees_the_consolidated_profile_and_forget_drops_it(
    runtime: PallasRuntime, fake_llm: FakeOpenAI
) -> None:
    service = memory_service_for(runtime)
    for i, fact in enumerate(("我喜欢猫", "我很喜欢猫咪", "我是夜猫子", "我现在每天早睡早起")):
        turn = TurnInput(BOT, A, ALICE, 10 + i, 1.0, f"记住 {fact}", to_me=True)
        assert (await handle_member_message(service, turn)).startswith("记住啦～")
    assert "还没有模型整理的档案" in await admin(runtime, A, "profile", str(ALICE))
    answer = {
        "statements": [{"text": "TA特别喜欢猫", "refs": ["f1", "f2"]},
                       {"text": "TA现在早睡早起", "refs": ["f4"]}],
        "superseded": [{"ref": "f3", "by": "f4"}],
    }  # fmt: skip
    fake_llm.enqueue(json.dumps(answer, ensure_ascii=False))
    assert service.change_listeners  # the app's consolidator, called here without its wait
    consolidator = service.change_listeners[0].__self__  # type: ignore[attr-defined]
    report = await consolidator.consolidate(service, BOT, group_scope(BOT, A), ALICE)
    assert report["outcome"] == "ok", report
    shown = await admin(runtime, A, "profile", str(ALICE))
    assert "模型整理，在用" in shown and "- TA特别喜欢猫（mem:1、mem:2）" in shown
    assert "整理时划掉：mem:3" in shown
    history = await admin(runtime, A, "history", str(ALICE))
    assert "整理档案时被新说法替换（模型判断）：mem:4" in history
    assert "还没有模型整理的档案" in await admin(runtime, B, "profile", str(ALICE))
    await admin(runtime, A, "forget", str(ALICE))
    assert "还没有模型整理的档案" in await admin(runtime, A, "profile", str(ALICE))


async def test_embeddings_are_stored_and_used_when_configured(
    tmp_path: Path, fake_llm: FakeOpenAI, database_url: str
) -> None:
    rt = await start(tmp_path, fake_llm, database_url, pallas_embedding_model="fake-embed")
    try:
        service = memory_service_for(rt)
        await service.remember(bot_id=BOT, scope=group_scope(BOT, A), kind="group_memory",
                               text="每周五晚上八点开黑", origin="admin")  # fmt: skip
        await service.drain()
        [item] = await service.repo.list_items(scopes=[group_scope(BOT, A)])
        [(_, _, vector)] = await service.repo.vectors([item.id], model="api:fake-embed")
        assert len(vector) == 64

        sources = memory_sources_for(rt, memory_service_for(rt))
        turn = TurnInput(BOT, A, ALICE, 9, 1.0, "周五晚上开黑吗", to_me=True)
        request = GatherRequest(turn, turn.text, rt.clock.now(), rt.group_configs.get(A),
                                "帕拉斯", True, False, True)  # fmt: skip
        contribution = await sources[0].gather(request)
        trace = contribution.trace["group_memory"]
        assert trace["embeddings"] is True
        assert trace["candidates"][0]["embedding"] is not None
        assert "开黑" in contribution.blocks["memory"].text
        inputs = [r.body["input"] for r in fake_llm.requests if r.path.endswith("/embeddings")]
        # the question is embedded without its asking frame (吗), as a stored fact reads
        assert inputs == [["每周五晚上八点开黑"], ["周五晚上开黑"]]
    finally:
        await rt.stop()


async def test_embeddings_off_by_default_means_no_embedding_calls(
    runtime: PallasRuntime, fake_llm: FakeOpenAI
) -> None:
    service = memory_service_for(runtime)
    await service.remember(bot_id=BOT, scope=group_scope(BOT, A), kind="group_memory",
                           text="每周五晚上八点开黑", origin="admin")  # fmt: skip
    sources = memory_sources_for(runtime, memory_service_for(runtime))
    turn = TurnInput(BOT, A, ALICE, 9, 1.0, "周五晚上开黑吗", to_me=True)
    request = GatherRequest(turn, turn.text, runtime.clock.now(), runtime.group_configs.get(A),
                            "帕拉斯", True, False, True)  # fmt: skip
    contribution = await sources[0].gather(request)
    assert contribution.trace["group_memory"]["embeddings"] is False
    assert [r for r in fake_llm.requests if r.path.endswith("/embeddings")] == []
