"""packages/recorder: every group message seen, and every message the bot sends, is stored.

These tests run NoneBot's own OneBot adapter: the edge's stock adapter mode (`pallas.onebot.edge`),
where each received message is read and recorded when the inbound entry gets it."""

from __future__ import annotations

import pytest
from nonebot.adapters.onebot.v11 import Adapter, Message, PrivateMessageEvent
from nonebug import App

from pallas.onebot import lifespan
from tests.plugins.conftest import (
    BOT_ID,
    Pallas,
    arrive,
    get_msg_result,
    group_message,
    onebot,
    text_message,
)

GROUP, QUIET_GROUP = 61_000_001, 61_000_002
ALICE, BOB = 41_001, 41_002


async def test_group_message_is_stored_with_sender_and_all_segments(
    app: App, pallas: Pallas
) -> None:
    runtime = await pallas.start()
    segments = [
        {"type": "reply", "data": {"id": "5550001"}},
        {"type": "text", "data": {"text": "今天的关卡"}},
        {"type": "face", "data": {"id": "178"}},
        {"type": "at", "data": {"qq": str(BOB)}},
    ]
    frame = group_message(
        GROUP, ALICE, segments, role="admin", card="阿米娅", nickname="amiya", time_=1_760_000_000
    )
    async with app.test_matcher() as ctx:
        bot = onebot(ctx)
        ctx.should_call_api(
            "get_msg", {"message_id": 5550001}, get_msg_result(5550001, GROUP, BOB, "原话")
        )
        ctx.receive_event(bot, await arrive(bot, frame))

    await runtime.writer.flush()
    stored = await runtime.repos.messages.find_by_message_ids(BOT_ID, GROUP, [frame["message_id"]])
    row = stored[frame["message_id"]]
    assert (row.user_id, row.card, row.nickname, row.role) == (ALICE, "阿米娅", "amiya", "admin")
    # the message as sent, not as the adapter trimmed it (reply / @ segments kept)
    assert [s["type"] for s in row.segments] == ["reply", "text", "face", "at"]
    assert row.reply_to == 5550001
    assert row.text.startswith("今天的关卡[表情]@")
    assert row.time == 1_760_000_000
    assert not row.is_bot


async def test_the_stock_adapter_mode_reads_at_the_entry_and_records_once(
    app: App, pallas: Pallas
) -> None:
    runtime = await pallas.start()
    installed = lifespan._installed
    edge = installed.edge if installed is not None else None
    assert edge is not None and not edge.reads_at_parse  # nothing calls on_read here
    line = group_message(GROUP, ALICE, "记一次")
    stranger = {  # a stranger's private message: refused by [private], recorded all the same
        **group_message(0, BOB, "你好", time_=1_760_000_100),
        "message_type": "private",
        "sub_type": "other",
    }
    del stranger["group_id"], stranger["anonymous"]
    event = Adapter.json_to_event(stranger)
    assert isinstance(event, PrivateMessageEvent)
    async with app.test_matcher() as ctx:  # no API call: neither line is answered
        bot = onebot(ctx)
        ctx.receive_event(bot, await arrive(bot, line))
        ctx.receive_event(bot, event)

    await runtime.writer.flush()
    assert await runtime.repos.messages.count(group_id=GROUP) == 1
    private = await runtime.repos.messages.find_by_message_ids(BOT_ID, 0, [stranger["message_id"]])
    assert private[stranger["message_id"]].text == "你好"
    assert edge.counters.stopped.get("private_policy") == 1


async def test_group_with_record_false_is_not_stored(app: App, pallas: Pallas) -> None:
    runtime = await pallas.start(groups={QUIET_GROUP: "record = false\n"})
    async with app.test_matcher() as ctx:
        bot = onebot(ctx)
        ctx.receive_event(bot, await arrive(bot, group_message(QUIET_GROUP, ALICE, "别记这句")))
        ctx.receive_event(bot, await arrive(bot, group_message(GROUP, ALICE, "这句要记")))

    await runtime.writer.flush()
    assert await runtime.repos.messages.count(group_id=QUIET_GROUP) == 0
    assert await runtime.repos.messages.count(group_id=GROUP) == 1


@pytest.mark.parametrize(
    ("message", "text"),
    [
        ([], ""),
        (
            [{"type": "image", "data": {"file": "a.jpg", "url": "https://example.invalid/a.jpg"}}],
            "[图片]",
        ),
        ([{"type": "mystery_segment", "data": {}}], ""),
        ("[CQ:face,id=178]好耶", "[表情]好耶"),  # string-format posts (message_post_format)
    ],
    ids=["empty", "image-only", "unknown-segment", "cq-string"],
)
async def test_edge_messages_are_stored_without_crashing(
    app: App, pallas: Pallas, message: list | str, text: str
) -> None:
    runtime = await pallas.start()
    frame = group_message(GROUP, ALICE, [], message_id=-1_234_567_890)  # negative ids are normal
    frame["message"] = message
    frame["raw_message"] = message if isinstance(message, str) else ""
    async with app.test_matcher() as ctx:  # a matcher exception fails the nonebug context
        bot = onebot(ctx)
        ctx.receive_event(bot, await arrive(bot, frame))

    await runtime.writer.flush()
    stored = await runtime.repos.messages.find_by_message_ids(BOT_ID, GROUP, [-1_234_567_890])
    assert stored[-1_234_567_890].text == text


async def test_bot_sends_are_stored_with_the_returned_message_id(app: App, pallas: Pallas) -> None:
    runtime = await pallas.start()
    async with app.test_api() as ctx:
        bot = onebot(ctx)
        ctx.should_call_api(
            "send_group_msg",
            {"group_id": GROUP, "message": text_message("周六见")},
            {"message_id": -2_000_000_001},
        )
        ctx.should_call_api(
            "send_msg",
            {"message_type": "group", "group_id": GROUP, "message": Message("[CQ:face,id=1]")},
            {"message_id": 3_000_000_002},
        )
        ctx.should_call_api(
            "send_msg",
            {"message_type": "private", "user_id": ALICE, "message": text_message("私聊")},
            {"message_id": 3_000_000_003},
        )
        ctx.should_call_api(  # the implementation returned no id: nothing to key the row on
            "send_group_msg", {"group_id": GROUP, "message": text_message("丢了")}, None
        )
        await bot.send_group_msg(group_id=GROUP, message=text_message("周六见"))
        await bot.send_msg(message_type="group", group_id=GROUP, message=Message("[CQ:face,id=1]"))
        await bot.send_msg(message_type="private", user_id=ALICE, message=text_message("私聊"))
        await bot.send_group_msg(group_id=GROUP, message=text_message("丢了"))

    await runtime.writer.flush()
    assert await runtime.repos.messages.count() == 2
    stored = await runtime.repos.messages.find_by_message_ids(
        BOT_ID, GROUP, [-2_000_000_001, 3_000_000_002]
    )
    first, second = stored[-2_000_000_001], stored[3_000_000_002]
    assert (first.is_bot, first.user_id, first.text) == (True, BOT_ID, "周六见")
    assert (second.is_bot, second.text) == (True, "[表情]")
