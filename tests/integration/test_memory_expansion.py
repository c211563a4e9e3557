"""Index-time expansion by the cheap model (scripted fake OpenAI server): stored with the row,
used by retrieval, never on the reply path; failures and the budget leave the row as it was."""

from __future__ import annotations

import json
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from pallas.app_wiring import memory_service_for
from pallas.config import GroupConfig
from pallas.core.clock import FakeClock
from pallas.core.settings import PallasSettings
from pallas.core.state import MemoryStateStore
from pallas.features.memory.isolation import group_scope
from pallas.features.memory.service import MemoryService
from pallas.runtime import PallasRuntime
from tests.harness.fake_openai import FakeOpenAI, Scripted

REPO = Path(__file__).resolve().parents[2]
BOT, A, OFF, POOR, DEFAULT = 7, 100, 200, 300, 400
ALICE = 20_011
NOW = 1_760_000_000.0
CAR_SICK = {
    "keywords": ["坐车", "交通", "身体不适", "晕"],
    "category": "health",
    "questions": ["我坐车会怎么样？", "我会晕车吗？"],
}


@pytest.fixture
async def runtime(
    tmp_path: Path, fake_llm: FakeOpenAI, database_url: str
) -> AsyncIterator[PallasRuntime]:
    shutil.copytree(REPO / "config", tmp_path / "config")
    groups = tmp_path / "config" / "groups"
    (groups / f"{A}.toml").write_text("[memory.expansion]\nenabled = true\n", encoding="utf-8")
    (groups / f"{OFF}.toml").write_text("[memory.expansion]\nenabled = false\n", encoding="utf-8")
    (groups / f"{POOR}.toml").write_text(
        "[memory.expansion]\nenabled = true\ndaily_token_budget = 50\n", encoding="utf-8"
    )
    clock = FakeClock(NOW)
    rt = await PallasRuntime.start(
        PallasSettings(
            database_url=database_url,
            pallas_config_dir=tmp_path / "config",
            openai_api_key="sk-test",
            openai_base_url=fake_llm.base_url,
        ),
        clock=clock,
        state=MemoryStateStore(clock),
        llm_http_client=fake_llm.http_client(),
    )
    yield rt
    await rt.stop()


async def store(service: MemoryService, group: int, text: str) -> int:
    outcome = await service.remember(
        bot_id=BOT, scope=group_scope(BOT, group), kind="person_facts", text=text,
        origin="teach", subject_user_id=ALICE,
    )  # fmt: skip
    await service.drain()
    return outcome.item.id


async def recalled(service: MemoryService, group: int, question: str) -> list[str]:
    config = GroupConfig().memory.model_copy(update={"personal_fallback_k": 0})
    result = await service.retrieve(
        "person_facts", question, scopes={group_scope(BOT, group)}, config=config, now=NOW,
        bot_id=BOT, group_id=group, subject_user_id=ALICE,
    )  # fmt: skip
    return [i.text for i in result.items]


async def test_the_stored_expansion_makes_a_paraphrase_findable(
    runtime: PallasRuntime, fake_llm: FakeOpenAI
) -> None:
    service = memory_service_for(runtime)
    assert await recalled(service, A, "我坐车会怎么样？") == []
    fake_llm.enqueue(json.dumps(CAR_SICK, ensure_ascii=False))
    item_id = await store(service, A, "TA晕车")
    request = fake_llm.chat_requests()[-1]
    assert "TA晕车" in request.messages[-1]["content"]
    stored = await service.repo.get(item_id)
    assert stored is not None and stored.source["expansion"]["category"] == "health"
    assert await recalled(service, A, "我坐车会怎么样？") == ["TA晕车"]


async def test_expansion_is_on_by_default_and_off_costs_nothing(
    runtime: PallasRuntime, fake_llm: FakeOpenAI
) -> None:
    service = memory_service_for(runtime)
    await store(service, OFF, "TA晕车")
    assert fake_llm.chat_requests() == []
    fake_llm.enqueue(json.dumps(CAR_SICK, ensure_ascii=False))
    item_id = await store(service, DEFAULT, "TA晕车")  # a group with no file of its own
    assert len(fake_llm.chat_requests()) == 1
    stored = await service.repo.get(item_id)
    assert stored is not None and stored.source["expansion"]["category"] == "health"


@pytest.mark.parametrize(
    "answer",
    [Scripted(status=500), Scripted(text="不知道"), Scripted(text='{"keywords": 3}')],
    ids=["http_error", "garbage", "no_usable_items"],
)
async def test_a_failed_expansion_leaves_the_fact_searchable(
    runtime: PallasRuntime, fake_llm: FakeOpenAI, answer: Scripted
) -> None:
    service = memory_service_for(runtime)
    fake_llm.enqueue(answer, answer, answer)  # the client may retry
    item_id = await store(service, A, "TA晕车")
    stored = await service.repo.get(item_id)
    assert stored is not None and "expansion" not in stored.source
    assert await recalled(service, A, "我晕车吗？") == ["TA晕车"]


async def test_the_daily_budget_skips_the_call(
    runtime: PallasRuntime, fake_llm: FakeOpenAI
) -> None:
    service = memory_service_for(runtime)
    await store(service, POOR, "TA晕车")
    assert fake_llm.chat_requests() == []
