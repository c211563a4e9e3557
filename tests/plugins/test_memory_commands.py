"""packages/memory_commands: "@帕拉斯 记住 …" / "忘记我"; blocks the chat only when it acted."""

from __future__ import annotations

from nonebug import App

from pallas.app_wiring import memory_service_for
from pallas.features.memory.isolation import own_scope
from pallas.features.memory.kinds import PERSON_FACTS
from pallas.features.memory_commands.member_commands import (
    REPLY_ABOUT_OTHERS,
    REPLY_FORGOTTEN,
    REPLY_TAUGHT,
)
from pallas.runtime import PallasRuntime
from tests.plugins.conftest import (
    BOT_ID,
    Pallas,
    arrive,
    at_bot,
    group_message,
    memory_command_ids,
    onebot,
    routed_message_ids,
    text_message,
)

GROUP, OTHER_GROUP, SILENT_GROUP = 64_000_001, 64_000_002, 64_000_003
ALICE, BOB = 41_001, 41_002


async def _facts(runtime: PallasRuntime, group_id: int, user_id: int) -> list[str]:
    items = await memory_service_for(runtime).repo.list_items(
        scopes=[own_scope(BOT_ID, group_id)], kind=PERSON_FACTS, subject_user_id=user_id
    )
    return [i.text for i in items]


async def test_teach_stores_a_fact_about_the_speaker_and_blocks_the_chat(
    app: App, pallas: Pallas
) -> None:
    runtime = await pallas.start(llm=True)
    async with app.test_matcher() as ctx:
        bot = onebot(ctx)
        event = await arrive(bot, group_message(GROUP, ALICE, at_bot("记住 我喜欢猫")))
        ctx.receive_event(bot, event)
        ctx.should_call_send(event, REPLY_TAUGHT, None)

    [fact] = await _facts(runtime, GROUP, ALICE)
    assert "喜欢猫" in fact
    assert await _facts(runtime, GROUP, BOB) == []
    assert await _facts(runtime, OTHER_GROUP, ALICE) == []
    assert await routed_message_ids(runtime, GROUP) == []  # the chat never saw it
    assert await memory_command_ids(runtime, GROUP) == [event.message_id]  # /pallas why does
    assert pallas.fake_llm.requests == []


async def test_forget_me_removes_what_was_taught(app: App, pallas: Pallas) -> None:
    runtime = await pallas.start(llm=True)
    async with app.test_matcher() as ctx:
        bot = onebot(ctx)
        teach = await arrive(bot, group_message(GROUP, ALICE, at_bot("记住 我喜欢猫")))
        ctx.receive_event(bot, teach)
        ctx.should_call_send(teach, REPLY_TAUGHT, None)
        forget = await arrive(bot, group_message(GROUP, ALICE, at_bot("忘记我")))
        ctx.receive_event(bot, forget)
        ctx.should_call_send(forget, REPLY_FORGOTTEN, None)

    assert await _facts(runtime, GROUP, ALICE) == []
    assert await routed_message_ids(runtime, GROUP) == []


async def test_a_deployment_nickname_addresses_the_bot_like_an_at(app: App, pallas: Pallas) -> None:
    runtime = await pallas.start(llm=True)
    async with app.test_matcher() as ctx:
        bot = onebot(ctx)
        # 小帕 comes from the NICKNAME setting only (not one of the persona's aliases)
        event = await arrive(bot, group_message(GROUP, ALICE, "小帕 记住 我喜欢狗"))
        ctx.receive_event(bot, event)
        ctx.should_call_send(event, REPLY_TAUGHT, None)

    [fact] = await _facts(runtime, GROUP, ALICE)
    assert "喜欢狗" in fact and "小帕" not in fact


async def test_an_ordinary_at_message_goes_on_to_the_chat(app: App, pallas: Pallas) -> None:
    runtime = await pallas.start(llm=True)
    pallas.fake_llm.enqueue("先练练级吧")
    frame = group_message(GROUP, ALICE, at_bot("你觉得这关怎么打？"))
    async with app.test_matcher() as ctx:
        bot = onebot(ctx)
        ctx.receive_event(bot, await arrive(bot, frame))
        ctx.should_call_api(
            "send_group_msg",
            {"group_id": GROUP, "message": text_message("先练练级吧")},
            {"message_id": -2_000_000_201},
        )

    assert await routed_message_ids(runtime, GROUP) == [frame["message_id"]]
    assert await _facts(runtime, GROUP, ALICE) == []


async def test_teaching_that_is_not_addressed_to_the_bot_is_ignored(
    app: App, pallas: Pallas
) -> None:
    runtime = await pallas.start(llm=True)
    frame = group_message(GROUP, ALICE, "记住 我喜欢猫")
    async with app.test_matcher() as ctx:  # no answer expected: nonebug fails on a send
        bot = onebot(ctx)
        ctx.receive_event(bot, await arrive(bot, frame))

    assert await _facts(runtime, GROUP, ALICE) == []
    assert await routed_message_ids(runtime, GROUP) == [frame["message_id"]]  # chat's turn


async def test_group_with_speaking_disabled_ignores_teaching(app: App, pallas: Pallas) -> None:
    runtime = await pallas.start(llm=True, groups={SILENT_GROUP: "enabled = false\n"})
    async with app.test_matcher() as ctx:
        bot = onebot(ctx)
        event = await arrive(bot, group_message(SILENT_GROUP, ALICE, at_bot("记住 我喜欢猫")))
        ctx.receive_event(bot, event)

    assert await _facts(runtime, SILENT_GROUP, ALICE) == []


async def test_a_teaching_about_another_member_by_their_card_is_not_stored(
    app: App, pallas: Pallas
) -> None:
    """Bob goes by 大橘子 in the group: "记住 大橘子欠钱不还" is about him, not Alice's fact."""
    runtime = await pallas.start(llm=True)
    async with app.test_matcher() as ctx:
        bot = onebot(ctx)
        chat = group_message(GROUP, BOB, "今天好冷", card="大橘子")
        ctx.receive_event(bot, await arrive(bot, chat))
        about_bob = await arrive(bot, group_message(GROUP, ALICE, at_bot("记住 大橘子欠钱不还")))
        ctx.receive_event(bot, about_bob)
        ctx.should_call_send(about_bob, REPLY_ABOUT_OTHERS, None)
        own = await arrive(bot, group_message(GROUP, ALICE, at_bot("记住 我觉得大橘子人不错")))
        ctx.receive_event(bot, own)
        ctx.should_call_send(own, REPLY_TAUGHT, None)

    assert await _facts(runtime, GROUP, ALICE) == ["TA觉得大橘子人不错"]
    assert await _facts(runtime, GROUP, BOB) == []
