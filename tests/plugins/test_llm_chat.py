"""packages/llm_chat: group messages go to the chat service; answers leave as send_group_msg."""

from __future__ import annotations

from nonebot.adapters.onebot.v11 import ActionFailed
from nonebug import App

from tests.plugins.conftest import (
    BOT_ID,
    Pallas,
    arrive,
    at_bot,
    group_message,
    onebot,
    routed_message_ids,
    text_message,
)

GROUP = 62_000_001
ALICE = 41_001


async def test_without_api_key_an_at_message_is_routed_but_nothing_is_sent(
    app: App, pallas: Pallas
) -> None:
    runtime = await pallas.start(llm=False)
    frame = group_message(GROUP, ALICE, at_bot("你觉得这关怎么打？"))
    async with app.test_matcher() as ctx:  # any send, or an exception in a matcher, fails here
        bot = onebot(ctx)
        ctx.receive_event(bot, await arrive(bot, frame))

    assert await routed_message_ids(runtime, GROUP) == [frame["message_id"]]
    assert pallas.fake_llm.requests == []
    await runtime.writer.flush()
    assert await runtime.repos.messages.count(group_id=GROUP) == 1  # still recorded


async def test_scripted_answer_goes_out_as_one_send_group_msg_per_bubble(
    app: App, pallas: Pallas
) -> None:
    runtime = await pallas.start(llm=True)
    pallas.fake_llm.enqueue("我也卡了好久\n可以先练练级")
    frame = group_message(GROUP, ALICE, at_bot("你觉得这关怎么打？"))
    async with app.test_matcher() as ctx:
        bot = onebot(ctx)
        ctx.receive_event(bot, await arrive(bot, frame))
        ctx.should_call_api(
            "send_group_msg",
            {"group_id": GROUP, "message": text_message("我也卡了好久")},
            {"message_id": -2_000_000_101},
        )
        ctx.should_call_api(
            "send_group_msg",
            {"group_id": GROUP, "message": text_message("可以先练练级")},
            {"message_id": 3_000_000_102},
        )

    [request] = pallas.fake_llm.chat_requests()
    assert request.messages[-1]["content"].rstrip().endswith("你觉得这关怎么打？")
    assert len(pallas.pauses) == 1  # a pause before the second bubble, none before the first
    # the bubbles were recorded as the bot's lines, under the ids the implementation returned
    await runtime.writer.flush()
    stored = await runtime.repos.messages.find_by_message_ids(
        BOT_ID, GROUP, [-2_000_000_101, 3_000_000_102]
    )
    assert (stored[-2_000_000_101].is_bot, stored[-2_000_000_101].text) == (True, "我也卡了好久")
    assert (stored[3_000_000_102].is_bot, stored[3_000_000_102].text) == (True, "可以先练练级")
    snapshot = await runtime.repos.snapshots.by_bot_message(BOT_ID, GROUP, -2_000_000_101)
    assert snapshot is not None and snapshot.message_id == frame["message_id"]


async def test_failed_send_stops_the_reply_without_crashing(app: App, pallas: Pallas) -> None:
    runtime = await pallas.start(llm=True)
    pallas.fake_llm.enqueue("第一句\n第二句")
    async with app.test_matcher() as ctx:
        bot = onebot(ctx)
        ctx.receive_event(bot, await arrive(bot, group_message(GROUP, ALICE, at_bot("在吗？"))))
        ctx.should_call_api(  # the implementation refuses (muted, risk control, …)
            "send_group_msg",
            {"group_id": GROUP, "message": text_message("第一句")},
            exception=ActionFailed(retcode=1200, status="failed"),
        )
        # no second send_group_msg: nonebug fails on an unexpected API call

    await runtime.writer.flush()
    assert await runtime.repos.messages.count(bot_id=BOT_ID, group_id=GROUP) == 1  # Alice's
    # the turn is still on record for `/pallas context`, as not fully delivered
    [snapshot] = await runtime.repos.snapshots.latest(GROUP, bot_id=BOT_ID)
    assert snapshot.outcome == "partial"


async def test_the_bots_own_message_echoed_back_is_recorded_but_not_routed(
    app: App, pallas: Pallas
) -> None:
    runtime = await pallas.start(llm=True)
    frame = group_message(GROUP, BOT_ID, "我自己发的", nickname="帕拉斯")
    async with app.test_matcher() as ctx:
        bot = onebot(ctx)
        ctx.receive_event(bot, await arrive(bot, frame))

    assert await routed_message_ids(runtime, GROUP) == []
    assert pallas.fake_llm.requests == []
    await runtime.writer.flush()
    assert await runtime.repos.messages.count(group_id=GROUP) == 1
