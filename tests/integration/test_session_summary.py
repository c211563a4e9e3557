"""Session summary compression against a real database (each backend) and the fake OpenAI
server."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest

from pallas.config import GroupConfig
from pallas.context.pipeline import CURRENT
from pallas.context.pipeline import SUMMARY as SUMMARY_KIND
from pallas.context.session_messages import build_llm_chat_messages
from pallas.core.clock import FakeClock
from pallas.core.db import migrate
from pallas.core.db.engine import create_engine, session_factory
from pallas.core.db.repositories.chat_sessions import ChatSessionRepository
from pallas.core.db.repositories.messages import MessageRepository
from pallas.core.db.repositories.usage import UsageEntry, UsageRepository
from pallas.core.records import SessionTurn
from pallas.core.settings import PallasSettings
from pallas.core.state import MemoryStateStore
from pallas.core.turn import TurnInput
from pallas.features.session.image_descriptions import PlaceholderDescriber
from pallas.features.session.repository import ImageDescriptionRepository, SessionTopicRepository
from pallas.features.session.session_summary import SessionSummaryHook
from pallas.features.session.summary_rules import SUMMARY_PREFIX, SessionSummaryConfig
from pallas.providers.client import LLMClient
from pallas.providers.image_fetch import ImageFetchConfig
from pallas.turn.parts.prompt_inputs import fetch_turn_rows
from tests.harness.fake_openai import FakeOpenAI, Scripted
from tests.unit.images.local_http import LocalHttpServer, Route

BOT, GROUP, OTHER_GROUP, USER, OTHER_USER = 2_900_000_001, 61_500_001, 61_500_002, 4_242, 4_343
SUMMARY = "用户在学吉他，卡在F和弦；帕拉斯建议每天慢练十分钟并约好周末汇报进度。"


@dataclass
class Env:
    hook: SessionSummaryHook
    sessions: ChatSessionRepository
    topics: SessionTopicRepository
    images: ImageDescriptionRepository
    usage: UsageRepository
    messages: MessageRepository
    clock: FakeClock
    llm: FakeOpenAI
    next_at: float = 0.0

    async def seed(self, rows: int, *, user: int = USER, group: int = GROUP, image_url: str = ""):
        """`rows` alternating user/assistant turns, one minute apart, after earlier seeds."""
        self.next_at = self.next_at or self.clock.now() - 86_000
        turns = []
        for i in range(rows):
            role = "user" if i % 2 == 0 else "assistant"
            content = f"第{i}句：吉他练习的事情" if role == "user" else f"第{i}句回答"
            if image_url and i == 0:
                content += f" [图片]:url={image_url}"
            self.next_at += 60
            turns.append(SessionTurn(BOT, group, user, role, content, self.next_at))
        await self.sessions.append(turns)

    async def run(self, config: GroupConfig, *, user: int = USER, group: int = GROUP):
        return await self.hook.maybe_compress(BOT, group, user, config)


def config(**session: object) -> GroupConfig:
    images = session.pop("images", ImageFetchConfig())
    return GroupConfig(session=SessionSummaryConfig(**session), images=images)


@pytest.fixture
async def env(database_url: str, clock: FakeClock) -> AsyncIterator[Env]:
    server = FakeOpenAI(default_reply="无", in_process=True)
    await server.start()
    await migrate.upgrade(database_url)
    engine = create_engine(database_url)
    factory = session_factory(engine)
    usage = UsageRepository(factory)
    settings = PallasSettings(
        openai_base_url=server.base_url, openai_api_key="sk-test", pallas_llm_max_retries=0
    )
    llm = LLMClient(settings, usage, clock, http_client=server.http_client())
    sessions = ChatSessionRepository(factory)
    topics = SessionTopicRepository(factory)
    images = ImageDescriptionRepository(factory)
    hook = SessionSummaryHook(
        chat_sessions=sessions,
        topics=topics,
        usage=usage,
        llm=llm,
        state=MemoryStateStore(clock),
        clock=clock,
        group_config=lambda _group: config(),
        describer=PlaceholderDescriber(llm=llm, cache=images, usage=usage, clock=clock),
    )
    yield Env(hook, sessions, topics, images, usage, MessageRepository(factory), clock, server)
    await llm.close()
    # the ledger's queued rows are stored before the engine goes, as `PallasRuntime.stop`
    # does: a flush left for later ran in the next test on a disposed engine and opened a
    # connection nobody closed (the tests share one event loop)
    await usage.flush()
    await engine.dispose()
    await server.stop()


async def test_below_threshold_nothing_happens(env: Env) -> None:
    await env.seed(23)
    outcome = await env.run(config())
    assert (outcome.status, outcome.reason) == ("skipped", "below_threshold")
    assert env.llm.chat_requests() == []


async def test_threshold_compresses_all_but_the_newest_keep(env: Env) -> None:
    await env.seed(24)
    before = await env.sessions.all_for_user(BOT, GROUP, USER)
    env.llm.enqueue(SUMMARY)
    outcome = await env.run(config())
    assert outcome.status == "compressed" and outcome.deleted_rows == 8

    after = await env.sessions.all_for_user(BOT, GROUP, USER)
    summaries = [t for t in after if t.is_summary]
    assert len(after) == 17 and len(summaries) == 1
    assert summaries[0].role == "user" and summaries[0].content == SUMMARY_PREFIX + SUMMARY
    kept = [t.content for t in after if not t.is_summary]
    assert kept == [t.content for t in before[-16:]]
    # the summariser saw the 8 oldest turns and nothing newer
    prompt = env.llm.chat_requests()[0].messages[-1]["content"]
    assert "第0句" in prompt and "第7句回答" in prompt and "第8句" not in prompt
    # archived as an old topic, cheap-model usage in the ledger
    topics = await env.topics.for_subject(BOT, GROUP, USER, limit=5)
    assert [t.text for t in topics] == [SUMMARY] and topics[0].scope == f"group:{BOT}:{GROUP}"
    cheap = await env.usage.totals(now=env.clock.now(), group_id=GROUP, task="cheap")
    assert cheap.calls == 1 and cheap.tokens > 0


async def test_summary_is_capped_to_max_chars(env: Env) -> None:
    await env.seed(24)
    env.llm.enqueue("以下是摘要：" + "用户聊了很多关于吉他的事情，" * 20)
    await env.run(config())
    summary = (await env.sessions.latest_summary(BOT, GROUP, USER)).content
    assert len(summary.removeprefix(SUMMARY_PREFIX)) <= 120
    assert not summary.removeprefix(SUMMARY_PREFIX).startswith("以下是")


async def test_cooldown_then_new_summary_supersedes_the_old_one(env: Env) -> None:
    await env.seed(24)
    env.llm.enqueue(SUMMARY)
    await env.run(config())
    await env.seed(8)  # 16 kept + 8 new + summary = 25 rows
    env.clock.advance(300)
    assert (await env.run(config())).reason == "cooldown_active"

    env.clock.advance(301)
    env.llm.enqueue("用户练吉他两周了，F和弦已经能按响，下一步想学扫弦节奏。")
    assert (await env.run(config())).status == "compressed"
    after = await env.sessions.all_for_user(BOT, GROUP, USER)
    summaries = [t for t in after if t.is_summary]
    assert len(summaries) == 1 and "扫弦" in summaries[0].content
    assert len(after) == 17
    assert "此前摘要：" + SUMMARY in env.llm.chat_requests()[-1].messages[-1]["content"]


async def test_cooldown_survives_a_restart(env: Env, clock: FakeClock) -> None:
    await env.seed(24)
    env.llm.enqueue(SUMMARY)
    await env.run(config())
    await env.seed(10)
    env.hook.state = MemoryStateStore(clock)  # a fresh process: the StateStore is empty
    assert (await env.run(config())).reason == "cooldown_active"


async def test_custom_keep_and_threshold(env: Env) -> None:
    await env.seed(6)
    env.llm.enqueue(SUMMARY)
    outcome = await env.run(config(threshold=6, keep_messages=2))
    assert outcome.deleted_rows == 4
    assert len(await env.sessions.all_for_user(BOT, GROUP, USER)) == 3


@pytest.mark.parametrize(
    "answer",
    [Scripted(status=500), Scripted(text="无"), Scripted(text="<think>让我想想")],
    ids=["http-500", "nothing-to-keep", "unfinished-think"],
)
async def test_failure_leaves_history_untouched_and_backs_off(env: Env, answer: Scripted) -> None:
    await env.seed(24)
    before = await env.sessions.all_for_user(BOT, GROUP, USER)
    env.llm.enqueue(answer)
    outcome = await env.run(config())
    assert outcome.status == "failed"
    assert await env.sessions.all_for_user(BOT, GROUP, USER) == before
    assert await env.topics.for_subject(BOT, GROUP, USER, limit=5) == []

    assert (await env.run(config())).reason == "backoff"  # not asked again on the next turn
    env.clock.advance(301)
    env.llm.enqueue(SUMMARY)
    assert (await env.run(config())).status == "compressed"


async def test_only_one_compression_in_flight_per_session(env: Env) -> None:
    await env.seed(24)
    env.llm.enqueue(Scripted(text=SUMMARY, delay=0.4))
    outcomes = await asyncio.gather(env.run(config()), env.run(config()))
    assert sorted((o.status, o.reason) for o in outcomes) == [
        ("compressed", "ok"),
        ("skipped", "in_flight"),
    ]
    assert len(env.llm.chat_requests()) == 1
    summaries = [t for t in await env.sessions.all_for_user(BOT, GROUP, USER) if t.is_summary]
    assert len(summaries) == 1


async def test_daily_budgets_per_group(env: Env) -> None:
    await env.seed(24, user=USER)
    await env.seed(24, user=OTHER_USER)
    await env.seed(24, user=USER, group=OTHER_GROUP)
    env.llm.enqueue(SUMMARY, SUMMARY)
    limited = config(daily_summary_limit=1)
    assert (await env.run(limited)).status == "compressed"
    assert (await env.run(limited, user=OTHER_USER)).reason == "budget_summaries"
    assert (await env.run(limited, group=OTHER_GROUP)).status == "compressed"
    # the next day the budget is fresh
    env.clock.advance(86_400)
    env.llm.enqueue(SUMMARY)
    assert (await env.run(limited, user=OTHER_USER)).status == "compressed"


async def test_cheap_token_budget_from_the_usage_ledger(env: Env) -> None:
    await env.seed(24)
    await env.usage.record(
        UsageEntry(
            now=env.clock.now(),
            bot_id=BOT,
            group_id=GROUP,
            task="cheap",
            model="m",
            prompt_tokens=900,
            completion_tokens=100,
        )
    )
    outcome = await env.run(config(daily_cheap_token_budget=1000))
    assert outcome.reason == "budget_cheap_tokens" and env.llm.chat_requests() == []


@pytest.fixture
async def image_server() -> AsyncIterator[LocalHttpServer]:
    server = LocalHttpServer()
    server.routes["/cat.png"] = Route()
    server.routes["/same-cat.png"] = Route()
    await server.start()
    yield server
    await server.close()


async def test_history_images_are_described_once_by_hash(
    env: Env, image_server: LocalHttpServer
) -> None:
    images = ImageFetchConfig(allow_private_hosts=frozenset({"127.0.0.1"}))
    await env.seed(24, image_url=image_server.url("/cat.png"))
    env.llm.enqueue("一只橘猫趴在键盘上", SUMMARY)
    assert (await env.run(config(images=images))).status == "compressed"

    vision, summary_call = env.llm.chat_requests()
    image_block = vision.messages[0]["content"][1]
    assert image_block["image_url"]["url"].startswith("data:image/png;base64,")
    transcript = summary_call.messages[-1]["content"]
    assert "[图片：一只橘猫趴在键盘上]" in transcript and "127.0.0.1" not in transcript
    vision_usage = await env.usage.totals(now=env.clock.now(), group_id=GROUP, task="vision")
    assert vision_usage.calls == 1

    # the same bytes behind another URL: the cached description, no second vision call
    await env.seed(24, user=OTHER_USER, image_url=image_server.url("/same-cat.png"))
    env.llm.enqueue(SUMMARY)
    assert (await env.run(config(images=images), user=OTHER_USER)).status == "compressed"
    assert len(env.llm.chat_requests()) == 3
    assert "[图片：一只橘猫趴在键盘上]" in env.llm.chat_requests()[-1].messages[-1]["content"]


async def test_describing_disabled_means_plain_image_markers(
    env: Env, image_server: LocalHttpServer
) -> None:
    images = ImageFetchConfig(allow_private_hosts=frozenset({"127.0.0.1"}))
    await env.seed(24, image_url=image_server.url("/cat.png"))
    env.llm.enqueue(SUMMARY)
    await env.run(config(images=images, vision_describe_enabled=False))
    [summary_call] = env.llm.chat_requests()
    transcript = summary_call.messages[-1]["content"]
    assert "[图片]" in transcript and "url=" not in transcript
    assert image_server.requests == []


async def test_history_image_on_a_private_address_is_never_fetched(
    env: Env, image_server: LocalHttpServer
) -> None:
    await env.seed(24, image_url=image_server.url("/cat.png"))  # no allowance this time
    env.llm.enqueue(SUMMARY)
    assert (await env.run(config())).status == "compressed"
    assert image_server.requests == [] and len(env.llm.chat_requests()) == 1


# --------------------------------------------------------------------------- reading side


def _turn_input() -> TurnInput:
    return TurnInput(BOT, GROUP, USER, message_id=999, time=0.0, text="今天继续练吗")


@pytest.mark.parametrize("later_rows", [0, 6, 40], ids=["fresh", "some-more", "slid-out"])
async def test_next_request_carries_the_summary_first(env: Env, later_rows: int) -> None:
    await env.seed(30)
    env.llm.enqueue(SUMMARY)
    assert (await env.run(config())).status == "compressed"
    env.clock.advance(10)
    await env.seed(later_rows)
    cfg = config()
    rows = await fetch_turn_rows(
        _turn_input(),
        timeline_width=0,
        config=cfg,
        messages=env.messages,
        sessions=env.sessions,
        state=env.hook.state,
    )
    built = build_llm_chat_messages(
        "今天继续练吗",
        group_id=GROUP,
        current_user_id=USER,
        user_turns=rows.user_turns,
        user_window=cfg.context.session_user_window,
    )
    kinds = [m.kind for m in built.messages]
    assert kinds[0] == SUMMARY_KIND and kinds[-1] == CURRENT and kinds.count(SUMMARY_KIND) == 1
    assert SUMMARY in built.messages[0].content
    assert built.history_count == min(16 + later_rows, cfg.context.session_user_window - 1)
