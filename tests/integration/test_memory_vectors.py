"""The embedding path end to end against the fake OpenAI server's /v1/embeddings: vectors are
stored on write, the vector index finds an old row beyond the recent-candidate window, it mixes
with BM25, and it never crosses a group, a member or a deletion."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from pallas.app_wiring import memory_service_for
from pallas.core.clock import FakeClock
from pallas.core.eager import eager_gather
from pallas.core.settings import PallasSettings
from pallas.core.state import MemoryStateStore
from pallas.features.memory.config import RetrievalConfig
from pallas.features.memory.isolation import group_scope
from pallas.features.memory.service import BlockResult, MemoryService
from pallas.runtime import PallasRuntime
from tests.harness.fake_openai import FakeOpenAI

REPO = Path(__file__).resolve().parents[2]
BOT, A, B = 7, 100, 200
ALICE, BOB = 20_011, 20_022
NOW = 1_760_000_000.0
TARGET = "龙门近卫局负责城市治安"
OTHERS = [
    "群里每周五晚上开黑", "新人进群先发自我介绍", "群相册里有很多猫片", "过年会发红包接龙",
    "群名改过五次", "群里不让发广告", "有人组过读书会", "每次版本更新都有人熬夜",
]  # fmt: skip
CONFIG = RetrievalConfig(candidate_cap=3, concept_weight=0.0, personal_fallback_k=0)


async def running_service(
    root: Path, database_url: str, *, in_process: bool
) -> AsyncIterator[tuple[MemoryService, FakeOpenAI]]:
    fake = FakeOpenAI(in_process=in_process)
    await fake.start()
    shutil.copytree(REPO / "config", root / "config")
    # a member's facts are consolidated after `consolidate_delay_s` of real time, and `put`
    # drains the background work: the same consolidation, without a minute's wait
    (root / "config" / "groups" / f"{A}.toml").write_text(
        "[memory.profile]\nconsolidate_delay_s = 0\n", encoding="utf-8"
    )
    clock = FakeClock(NOW)
    rt = await PallasRuntime.start(
        PallasSettings(
            database_url=database_url,
            pallas_config_dir=root / "config",
            openai_api_key="sk-test",
            openai_base_url=fake.base_url,
            pallas_embedding_model="fake-embed",
        ),
        clock=clock,
        state=MemoryStateStore(clock),
        llm_http_client=fake.http_client() if in_process else None,
    )
    yield memory_service_for(rt), fake
    await rt.stop()
    await fake.stop()


@pytest.fixture
async def service(
    tmp_path: Path, database_url: str
) -> AsyncIterator[tuple[MemoryService, FakeOpenAI]]:
    async for running in running_service(tmp_path, database_url, in_process=True):
        yield running


@pytest.fixture
async def socket_service(
    tmp_path: Path, database_url: str
) -> AsyncIterator[tuple[MemoryService, FakeOpenAI]]:
    """Over the real socket server: the SDK's own connection pool, whose cancel scopes the
    eagerly stepped retrieval once broke (an in-process transport has none)."""
    async for running in running_service(tmp_path, database_url, in_process=False):
        yield running


async def put(svc: MemoryService, group: int, text: str, *, kind: str = "group_memory",
              subject: int | None = None) -> int:  # fmt: skip
    outcome = await svc.remember(bot_id=BOT, scope=group_scope(BOT, group), kind=kind, text=text,
                                 origin="admin", subject_user_id=subject)  # fmt: skip
    await svc.drain()  # the embedding is written in the background
    return outcome.item.id


async def ask(svc: MemoryService, question: str, config: RetrievalConfig = CONFIG,
              kind: str = "group_memory", subject: int | None = None) -> BlockResult:  # fmt: skip
    return await svc.retrieve(kind, question, scopes={group_scope(BOT, A)}, config=config,
                              now=NOW, bot_id=BOT, group_id=A, subject_user_id=subject)  # fmt: skip


async def test_the_index_finds_an_old_row_beyond_the_recent_window(
    service: tuple[MemoryService, FakeOpenAI],
) -> None:
    svc, fake = service
    target = await put(svc, A, TARGET)
    for text in OTHERS:  # newer rows push the target out of the 3-row window
        await put(svc, A, text)
    await put(svc, B, TARGET + "（B群）")
    embedded = [r for r in fake.requests if r.path.endswith("/embeddings")]
    assert len(embedded) == len(OTHERS) + 2, "one /v1/embeddings call per stored row"

    found = await ask(svc, "近卫局负责什么？")
    assert [i.text for i in found.items][:1] == [TARGET]
    assert found.trace["vector_hits"][:1] == [f"mem:{target}"]
    best = found.trace["candidates"][0]
    assert best["embedding"] > 0 and best["bm25"] > 0, "cosine mixed with BM25, not instead"
    assert all("B群" not in i.text for i in found.items), "another group's row never"

    window_only = await ask(svc, "近卫局负责什么？", CONFIG.model_copy(update={"vector_k": 0}))
    assert TARGET not in [i.text for i in window_only.items], "BM25 alone never saw it"

    await svc.delete([target], reason="admin", scopes=None)
    gone = await ask(svc, "近卫局负责什么？")
    assert TARGET not in [i.text for i in gone.items], "a deleted row leaves the index"


async def test_a_found_row_comes_from_the_rows_kept_with_the_index(
    service: tuple[MemoryService, FakeOpenAI], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rows the index finds beyond the window are kept beside its vectors: the reply path
    reads none of them (that database round trip was its longest wait after the question's
    vector). A row changed in place since it joined (an expansion stored for it) is read
    again at the next write generation, so a hit carries what the row says now."""
    svc, _ = service
    target = await put(svc, A, TARGET)
    for text in OTHERS:
        await put(svc, A, text)
    no_hits = CONFIG.model_copy(update={"vector_k": 0})  # the index is built, none of it read
    assert TARGET not in [i.text for i in (await ask(svc, "近卫局负责什么？", no_hits)).items]
    reads: list[list[int]] = []
    real = svc.repo.get_many

    async def counted(item_ids: list[int]) -> list[object]:
        reads.append(sorted(item_ids))
        return await real(item_ids)  # type: ignore[return-value]

    monkeypatch.setattr(svc.repo, "get_many", counted)
    found = await ask(svc, "近卫局管城市治安吗？")
    assert f"mem:{target}" in found.trace["vector_hits"]
    assert [i.text for i in found.items][:1] == [TARGET] and reads == []

    expansion = {"keywords": ["警察", "巡逻"], "category": "other", "questions": []}
    assert await svc.repo.set_expansion(target, expansion)
    await svc.invalidate([group_scope(BOT, A)])
    changed = await ask(svc, "近卫局管城市治安吗？")
    assert f"mem:{target}" in changed.trace["vector_hits"]
    hit = next(i for i in changed.items if i.id == target)
    assert hit.source["expansion"] == expansion and hit.revision == 1
    assert reads == [[target]], "only the changed row was read again"


async def test_the_index_is_read_as_deep_as_the_block_shows_rows(
    service: tuple[MemoryService, FakeOpenAI],
) -> None:
    """Each row found beyond the window is read and scored every turn: a three-row block asks
    the index for its 8 nearest rows (twice its top-k, at least 8), not `vector_k`'s 20; a
    block showing 12 asks for 20 (`embeddings.vector_depth`)."""
    svc, _ = service
    target = await put(svc, A, TARGET, kind="knowledge")
    for n in range(30):  # all share words with the question: each has a cosine above 0
        await put(svc, A, f"近卫局第{n}号公告：城市巡逻第{n}组", kind="knowledge")
    shallow = await ask(svc, "近卫局负责什么？", kind="knowledge")
    assert [i.text for i in shallow.items][:1] == [TARGET]
    assert f"mem:{target}" in shallow.trace["vector_hits"]
    assert 3 < len(shallow.trace["vector_hits"]) <= 8
    twelve = CONFIG.knowledge.model_copy(update={"top_k": 12})
    wide = CONFIG.model_copy(update={"knowledge": twelve})
    deep = await ask(svc, "近卫局负责什么？", wide, kind="knowledge")
    assert 8 < len(deep.trace["vector_hits"]) <= 20


async def test_person_rows_come_only_from_the_asking_member(
    service: tuple[MemoryService, FakeOpenAI],
) -> None:
    svc, _ = service
    await put(svc, A, "TA对花生过敏", kind="person_facts", subject=BOB)
    mine = await put(svc, A, "TA对芒果过敏", kind="person_facts", subject=ALICE)
    for text in ["TA喜欢猫", "TA讨厌下雨天", "TA用机械键盘"]:
        await put(svc, A, text, kind="person_facts", subject=ALICE)
    found = await ask(svc, "我对什么过敏？", kind="person_facts", subject=ALICE)
    assert "TA对花生过敏" not in [i.text for i in found.items]
    assert f"mem:{mine}" in found.trace["vector_hits"]


async def test_a_retrieval_stepped_eagerly_still_fetches_its_query_vector(
    socket_service: tuple[MemoryService, FakeOpenAI],
) -> None:
    """The context sources run under `eager_gather`, which steps a coroutine in the caller's
    task until it first suspends: the query's embeddings call must not enter the HTTP client's
    cancel scopes there and leave them in another task (it failed every such call)."""
    svc, fake = socket_service
    await put(svc, A, TARGET)
    await ask(svc, "随便问问")  # warm: the window and the index are loaded, nothing suspends
    for n, question in enumerate(("近卫局负责什么？", "近卫局管什么", "近卫局是干嘛的")):
        [found] = await eager_gather(ask(svc, question))
        assert found.trace["embeddings"], (n, question)
        assert [i.text for i in found.items][:1] == [TARGET]
    failed = [r for r in fake.requests if r.path.endswith("/embeddings")]
    assert len(failed) == 5, "one call per row and per question, none lost"
