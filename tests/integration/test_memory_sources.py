"""Memory retrieval, worldbooks and extraction over a real runtime (SQLite, state, fake LLM)."""

from __future__ import annotations

import json
import shutil
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest

from pallas.app_memory import context_token_budget
from pallas.app_wiring import extraction_hook_for, memory_service_for, memory_sources_for
from pallas.context.context import GatherRequest, assemble_direct_chat_context
from pallas.core.clock import FakeClock
from pallas.core.db.repositories.usage import UsageEntry
from pallas.core.records import StoredMessage
from pallas.core.settings import PallasSettings
from pallas.core.state import MemoryStateStore
from pallas.core.tokens import count_tokens
from pallas.core.turn import CompletedTurn, Sender, TurnInput
from pallas.features.memory.isolation import group_scope, pool_scope
from pallas.features.memory.service import MemoryService
from pallas.features.memory_prompt.profile import ASIDE, HEARD, TOLD
from pallas.features.memory_prompt.sources import KnowledgeSource
from pallas.features.worldbook.service import WorldbookLibrary
from pallas.providers.encoder_slot import EncoderSlot
from pallas.providers.sentence_encoder import HashingEncoder
from pallas.runtime import PallasRuntime
from tests.harness.fake_openai import FakeOpenAI

REPO = Path(__file__).resolve().parents[2]
BOT = 2_900_000_001
A, B = 61_000_001, 61_000_002
ALICE, BOB = 20_001, 20_002


@pytest.fixture
async def runtime(
    tmp_path: Path, fake_llm: FakeOpenAI, database_url: str
) -> AsyncIterator[PallasRuntime]:
    shutil.copytree(REPO / "config", tmp_path / "config")
    (tmp_path / "config" / "worldbooks").mkdir(exist_ok=True)
    (tmp_path / "config" / "groups" / f"{A}.toml").write_text(
        '[memory]\nshared_pools = ["arknights"]\n[memory.extraction]\nevery_n_turns = 2\n'
        'min_interval_s = 0\n[worldbook]\nbooks = ["rhodes"]\n',
        encoding="utf-8",
    )
    settings = PallasSettings(
        database_url=database_url,
        pallas_config_dir=tmp_path / "config",
        openai_api_key="sk-test",
        openai_base_url=fake_llm.base_url,
        pallas_llm_max_retries=0,
    )
    clock = FakeClock()
    rt = await PallasRuntime.start(
        settings, clock=clock, state=MemoryStateStore(clock), llm_http_client=fake_llm.http_client()
    )
    yield rt
    await rt.stop()


def turn(group: int, user: int, text: str, *, message_id: int = 1, card: str = "") -> TurnInput:
    sender = Sender(user_id=user, card=card)
    return TurnInput(BOT, group, user, message_id, 1.0, text, sender=sender, to_me=True)


def request(rt: PallasRuntime, t: TurnInput, *, social: bool = False) -> GatherRequest:
    return GatherRequest(
        turn=t,
        current_text=t.text,
        now=rt.clock.now(),
        config=rt.group_configs.get(t.group_id),
        persona_name="帕拉斯",
        allow_persistent_memory=not social,
        short_social=social,
        addressed=True,
    )


async def seed(service: MemoryService) -> None:
    a = group_scope(BOT, A)
    await service.remember(bot_id=BOT, scope=a, kind="group_memory", text="本群每周五晚上八点开黑",
                           origin="admin")  # fmt: skip
    await service.remember(bot_id=BOT, scope=a, kind="person_facts", text="TA喜欢猫",
                           origin="teach", subject_user_id=ALICE)  # fmt: skip
    await service.remember(bot_id=BOT, scope=a, kind="relationship", text="喜欢叫帕拉斯小羊",
                           origin="extract", subject_user_id=ALICE)  # fmt: skip
    await service.remember(bot_id=BOT, scope=pool_scope("arknights"), kind="ip_knowledge",
                           text="开黑时常用的干员是能天使", origin="admin")  # fmt: skip


async def test_group_a_sees_its_memory_group_b_sees_nothing(runtime: PallasRuntime) -> None:
    service = memory_service_for(runtime)
    await seed(service)
    sources = memory_sources_for(runtime, memory_service_for(runtime))
    bundle_a = await assemble_direct_chat_context(
        sources, request(runtime, turn(A, ALICE, "今晚开黑吗？"))
    )
    memory = bundle_a.blocks["memory"].text
    assert "【相关群内记忆】\n- 本群每周五晚上八点开黑" in memory
    assert "【相关 IP 知识】\n- 开黑时常用的干员是能天使" in memory, "opted-in shared pool"
    # no vector model (the encoder is still loading here): words cannot judge relevance, so
    # the speaker's whole profile comes along (ranked and cut only by meaning: the fifty-facts
    # test below)
    assert "「TA喜欢猫」" in bundle_a.blocks["person_facts"].text
    assert "小羊" in bundle_a.blocks["relationship"].text
    assert bundle_a.traces["memory"]["group_memory"]["chosen"]
    asked = await assemble_direct_chat_context(
        sources, request(runtime, turn(A, ALICE, "我喜欢什么动物？"))
    )
    assert "「TA喜欢猫」" in asked.blocks["person_facts"].text  # the speaker's profile
    assert asked.blocks["person_facts"].memory_ids

    bundle_b = await assemble_direct_chat_context(
        sources, request(runtime, turn(B, ALICE, "今晚开黑吗？"))
    )
    assert dict(bundle_b.blocks) == {}
    assert bundle_b.traces["person_facts"]["loaded"] == 0


async def test_person_rows_follow_the_user_id_not_the_name(runtime: PallasRuntime) -> None:
    await seed(memory_service_for(runtime))
    sources = memory_sources_for(runtime, memory_service_for(runtime))
    impostor = turn(A, BOB, "我喜欢什么动物？", card="爱丽丝")  # same display name, other id
    bundle = await assemble_direct_chat_context(sources, request(runtime, impostor))
    assert "person_facts" not in bundle.blocks and "relationship" not in bundle.blocks


async def test_short_social_turn_skips_personal_memory(runtime: PallasRuntime) -> None:
    await seed(memory_service_for(runtime))
    sources = memory_sources_for(runtime, memory_service_for(runtime))
    bundle = await assemble_direct_chat_context(
        sources, request(runtime, turn(A, ALICE, "开黑"), social=True)
    )
    for name in ("memory", "relationship", "person_facts"):
        assert bundle.traces[name] == {"skipped": "skipped_short_social_turn"}
    assert not {"memory", "relationship", "person_facts"} & set(bundle.blocks)
    assert "knowledge" in bundle.traces, "knowledge still runs"


async def test_cache_hit_then_a_write_is_visible_at_once(runtime: PallasRuntime) -> None:
    service = memory_service_for(runtime)
    await seed(service)
    # its own service instance and caches
    sources = memory_sources_for(runtime, memory_service_for(runtime))
    ask = request(runtime, turn(A, ALICE, "今晚开黑吗？"))
    first = await assemble_direct_chat_context(sources, ask)
    second = await assemble_direct_chat_context(sources, ask)
    assert first.traces["memory"]["group_memory"]["cache"] == "miss"
    assert second.traces["memory"]["group_memory"]["cache"] == "hit"
    await service.remember(bot_id=BOT, scope=group_scope(BOT, A), kind="group_memory",
                           text="今晚开黑改到九点", origin="admin")  # fmt: skip
    third = await assemble_direct_chat_context(sources, ask)
    assert "今晚开黑改到九点" in third.blocks["memory"].text
    assert third.traces["memory"]["group_memory"]["cache"] == "miss"


async def test_chosen_rows_get_their_access_counted(runtime: PallasRuntime) -> None:
    await seed(memory_service_for(runtime))
    sources = memory_sources_for(runtime, memory_service_for(runtime))
    bundle = await assemble_direct_chat_context(sources, request(runtime, turn(A, ALICE, "开黑")))
    await sources[0].service.drain()  # type: ignore[attr-defined]
    ref = bundle.traces["memory"]["group_memory"]["chosen"][0]
    item = await memory_service_for(runtime).repo.get(int(ref.removeprefix("mem:")))
    assert item is not None and item.access_count == 1
    assert item.last_access_at == runtime.clock.now()


# ---------------------------------------------------------------- worldbooks


def write_book(rt: PallasRuntime, entries: dict) -> None:
    path = rt.settings.worldbooks_dir / "rhodes.json"
    path.write_text(json.dumps({"entries": entries}, ensure_ascii=False), encoding="utf-8")


def entry(uid: int, key: str, content: str, **extra) -> dict:
    return {"uid": uid, "key": [key], "content": content, "comment": key, **extra}


def knowledge_source(rt: PallasRuntime) -> KnowledgeSource:
    return KnowledgeSource(
        memory_service_for(rt),
        WorldbookLibrary(rt.settings.worldbooks_dir, check_interval_s=0),
        messages=rt.repos.messages,
        state=rt.state,
        context_tokens=context_token_budget(rt.llm),
        regex_dir=rt.settings.pallas_config_dir / "regex",
        personas=rt.personas,
    )


async def test_worldbook_entry_activates_sticks_and_reloads(runtime: PallasRuntime) -> None:
    write_book(runtime, {"0": entry(0, "凯尔希", "凯尔希是医疗部门负责人。", sticky=2)})
    source = knowledge_source(runtime)
    hit = await source.gather(request(runtime, turn(A, ALICE, "凯尔希在吗", message_id=1)))
    block = hit.blocks["worldbook"]
    assert "knowledge" not in hit.blocks, "entries are placed by the pipeline, not in 【知识】"
    assert [a.entry.content for a in block.items] == ["凯尔希是医疗部门负责人。"]
    assert block.memory_ids == ("worldbook:rhodes#0",)
    assert hit.trace["worldbook"]["activated"][0]["reason"] == "key"

    sticky = await source.gather(request(runtime, turn(A, ALICE, "今天吃什么", message_id=2)))
    assert sticky.trace["worldbook"]["activated"][0]["reason"] == "sticky"
    gone = await source.gather(request(runtime, turn(A, ALICE, "睡了睡了", message_id=3)))
    assert "worldbook" not in gone.blocks

    write_book(runtime, {"0": entry(0, "凯尔希", "凯尔希医生，说话很简短。")})
    reloaded = await source.gather(request(runtime, turn(A, ALICE, "凯尔希呢", message_id=4)))
    assert "说话很简短" in reloaded.blocks["worldbook"].text
    other_group = await source.gather(request(runtime, turn(B, ALICE, "凯尔希呢", message_id=5)))
    assert "worldbook" not in other_group.blocks, "group B has no book bound"


async def test_worldbook_sticky_counts_chat_messages(runtime: PallasRuntime) -> None:
    """SillyTavern's unit: sticky = 4 set at message 1 holds while the chat is shorter than 1 + 4
    messages, whoever wrote them; the bot only answers messages 1, 4 and 5 (2 and 3 are
    members talking among themselves)."""
    write_book(runtime, {"0": entry(0, "凯尔希", "凯尔希是医疗部门负责人。", sticky=4)})
    source = knowledge_source(runtime)
    reasons = {}
    texts = {1: "凯尔希在吗", 2: "路过", 3: "路过+1", 4: "吃了吗", 5: "睡了"}
    for mid, text in texts.items():
        await runtime.repos.messages.add_many([stored(mid, ALICE, text)])
        if mid in (1, 4, 5):
            got = await source.gather(request(runtime, turn(A, ALICE, text, message_id=mid)))
            activated = got.trace["worldbook"]["activated"]
            reasons[mid] = activated[0]["reason"] if activated else None
    # counted in bot replies, message 5 would still be sticky (its 3rd reply turn of 4)
    assert reasons == {1: "key", 4: "sticky", 5: None}


async def test_worldbook_keys_match_the_regex_cleaned_text(runtime: PallasRuntime) -> None:
    """Request-stage rules run before the worldbook scan (global file + group rule)."""
    (runtime.settings.pallas_config_dir / "regex").mkdir(exist_ok=True)
    (runtime.settings.pallas_config_dir / "regex" / "10-names.toml").write_text(
        '[[regex]]\nname = "alias"\npattern = "(?i)kal.?tsit"\nreplacement = "凯尔希"\n',
        encoding="utf-8",
    )
    group_c = 61_000_003  # a fresh group file (A's is cached by the running config store)
    (runtime.settings.pallas_config_dir / "groups" / f"{group_c}.toml").write_text(
        '[worldbook]\nbooks = ["rhodes"]\n'
        '[[context_rules.regex]]\nname = "spoiler"\npattern = "罗德岛"\nreplacement = "某地"\n',
        encoding="utf-8",
    )
    write_book(
        runtime,
        {
            "0": entry(0, "凯尔希", "凯尔希是医疗部门负责人。"),
            "1": entry(1, "罗德岛", "罗德岛是一艘陆行舰。"),
        },
    )
    source = knowledge_source(runtime)
    req = request(runtime, turn(group_c, ALICE, "Kal'tsit 在罗德岛吗", message_id=1))
    got = await source.gather(req)
    assert [a.entry.uid for a in got.blocks["worldbook"].items] == [0]


# ---------------------------------------------------------------- extraction


def stored(mid: int, user: int, text: str, *, is_bot: bool = False) -> StoredMessage:
    return StoredMessage(BOT, A, mid, user, 1000.0 + mid, text, card="爱丽丝", is_bot=is_bot)


def completed(rt: PallasRuntime, mid: int) -> CompletedTurn:
    t = turn(A, ALICE, "嗯嗯", message_id=mid)
    return CompletedTurn(t, "嗯嗯", "好哦", (mid + 1000,), f"turn{mid}")


async def test_extraction_stores_own_words_and_drops_quoted_bot_lines(
    runtime: PallasRuntime, fake_llm: FakeOpenAI
) -> None:
    await runtime.repos.messages.add_many(
        [
            stored(1, BOT, "我最喜欢吃蜂蜜蛋糕啦", is_bot=True),
            stored(2, ALICE, "帕拉斯说「我最喜欢吃蜂蜜蛋糕」哈哈"),
            stored(3, ALICE, "我最近在学吉他，手指好疼"),
        ]
    )
    answer = {
        "facts": [
            {"subject": "u1", "kind": "person", "key": "favorite_food",
             "text": "最喜欢吃蜂蜜蛋糕", "source": ["m2"]},
            {"subject": "u1", "kind": "person", "key": "hobby", "text": "在学吉他",
             "source": ["m3"]},
        ]
    }  # fmt: skip
    fake_llm.enqueue(json.dumps(answer, ensure_ascii=False))
    hook = extraction_hook_for(runtime, memory_service_for(runtime))
    await hook.after_turn(completed(runtime, 10))
    assert fake_llm.chat_requests() == [], "batched: nothing after the first delivered turn"
    await hook.after_turn(completed(runtime, 11))
    [call] = fake_llm.chat_requests()
    assert "[m1] bot: 我最喜欢吃蜂蜜蛋糕啦" in call.messages[1]["content"]

    facts = await hook.service.repo.list_items(scopes=[group_scope(BOT, A)])
    assert [(f.text, f.subject_user_id, f.origin) for f in facts] == [
        ("在学吉他", ALICE, "extract")
    ]
    assert facts[0].source["message_ids"] == [3]
    report = await runtime.state.get(f"memory:extract:report:{BOT}:{A}")
    assert report["rejected"] == [{"text": "最喜欢吃蜂蜜蛋糕", "reason": "quoted_bot"}]


async def test_extraction_never_reads_another_plugins_sends_as_the_bots_words(
    runtime: PallasRuntime, fake_llm: FakeOpenAI
) -> None:
    """Issue 45: a dice plugin's answer, sent from the account, is stored with its name and
    left out of the batch the cheap model reads (it is neither a member's nor the persona's)."""
    await runtime.repos.messages.add_many(
        [
            stored(1, ALICE, "/roll 2d6"),
            replace(stored(2, BOT, "你掷出了2个6面骰子, 点数为7", is_bot=True), sent_by="roll"),
            stored(3, ALICE, "我最近在学吉他，手指好疼"),
        ]
    )
    fake_llm.enqueue(json.dumps({"facts": []}))
    hook = extraction_hook_for(runtime, memory_service_for(runtime))
    await hook.run_job(BOT, A, runtime.group_configs.get(A).memory.extraction)
    [call] = fake_llm.chat_requests()
    content = call.messages[1]["content"]
    assert "在学吉他" in content and "掷出" not in content


async def test_extraction_respects_the_daily_budget(
    runtime: PallasRuntime, fake_llm: FakeOpenAI
) -> None:
    await runtime.repos.messages.add_many([stored(1, ALICE, "我最近在学吉他")])
    await runtime.repos.usage.record(
        UsageEntry(
            now=runtime.clock.now(),
            bot_id=BOT,
            group_id=A,
            task="cheap",
            model="m",
            prompt_tokens=39_900,
            completion_tokens=0,
        )
    )
    hook = extraction_hook_for(runtime, memory_service_for(runtime))
    cfg = runtime.group_configs.get(A).memory.extraction
    report = await hook.run_job(BOT, A, cfg)
    assert report["outcome"] == "budget"
    assert fake_llm.chat_requests() == []


MANY_FACTS = [
    "TA在一家火锅店当厨师", "TA老家是江西赣州的", "TA对海鲜过敏", "TA养了一只八哥叫黑豆",
    "TA住在武汉光谷", "TA每天晚上练半小时毛笔字", "TA早饭基本都吃热干面", "TA开二手宝来",
    *(f"TA第{n}次去家门口的超市买酸奶和面包" for n in range(42)),
]  # fmt: skip


async def test_fifty_facts_the_few_relevant_within_the_budget(runtime: PallasRuntime) -> None:
    """Issue #47: of a member's 50 facts only the relevant few reach the request as relevant,
    within the profile's token budget; a question about something never said brings none as
    relevant — only the few nearest, aside and labelled as possibly unrelated, so the model
    can say it was never told (`[memory.profile] near_facts = 0`: not even those)."""
    runtime.encoder = EncoderSlot.ready(HashingEncoder())  # ranks by meaning (a test's fake)
    service = memory_service_for(runtime)
    for text in MANY_FACTS:
        await service.remember(bot_id=BOT, scope=group_scope(BOT, A), kind="person_facts",
                               text=text, origin="teach", subject_user_id=ALICE)  # fmt: skip
    sources = memory_sources_for(runtime, service)
    budget = runtime.group_configs.get(A).memory.profile.token_budget
    assert budget == 150
    asked = await assemble_direct_chat_context(
        sources, request(runtime, turn(A, ALICE, "我对什么过敏来着？"))
    )
    block = asked.blocks["person_facts"]
    assert "「TA对海鲜过敏」" in block.text
    assert 1 <= len(block.memory_ids) < 10
    phrases = block.text.count("「")
    assert count_tokens(block.text) <= budget + 10 + phrases  # + the header and labels
    never = await assemble_direct_chat_context(
        sources, request(runtime, turn(A, ALICE, "你还记得我说过我的血型吗？"))
    )
    aside = never.blocks["person_facts"].text.split("\n")[1:]
    assert aside[0].startswith(ASIDE) and not any(TOLD in line or HEARD in line for line in aside)
    assert never.blocks["person_facts"].text.count("「") <= 3  # near_facts
    asked_strictly = request(runtime, turn(A, ALICE, "你还记得我说过我的血型吗？"))
    memory = asked_strictly.config.memory
    profile = memory.profile.model_copy(update={"near_facts": 0})
    config = asked_strictly.config.model_copy(
        update={"memory": memory.model_copy(update={"profile": profile})}
    )
    never = await assemble_direct_chat_context(sources, replace(asked_strictly, config=config))
    assert "person_facts" not in never.blocks  # near_facts 0: nothing at all
    # the consolidations the teachings queued (each waits out its delay) must not outlive
    # this test's database: stopped here, as the app's stop does past its deadline
    await service.drain(within_s=0.1)
