"""packages/stickers: members' stickers are collected per group; the naming job is scheduled."""

from __future__ import annotations

from typing import Any

from nonebot.adapters.onebot.v11 import Message, MessageSegment
from nonebug import App

from pallas.features.stickers.repository import StickerRepository
from tests.plugins.conftest import BOT_ID, Pallas, arrive, group_message, onebot

GROUP, QUIET_GROUP = 61_300_001, 61_300_002
ALICE = 41_301
URL = "https://multimedia.nt.qq.com.cn/download?appid=1407&fileid=abc"


def sticker(file: str) -> dict[str, Any]:
    data = {"file": file, "sub_type": 1, "summary": "[动画表情]", "url": URL}
    return {"type": "image", "data": data}


async def test_member_stickers_are_collected_and_counted(app: App, pallas: Pallas) -> None:
    runtime = await pallas.start(groups={QUIET_GROUP: "[stickers]\ncollect = false\n"})
    photo = {"type": "image", "data": {"file": "photo.jpg", "sub_type": 0, "url": URL}}
    async with app.test_matcher() as ctx:
        bot = onebot(ctx)
        for frame in (
            group_message(GROUP, ALICE, [sticker("DOG.png")]),
            group_message(GROUP, ALICE, [sticker("DOG.png")]),
            group_message(GROUP, ALICE, [photo]),
            group_message(QUIET_GROUP, ALICE, [sticker("DOG.png")]),
        ):
            ctx.receive_event(bot, await arrive(bot, frame))

    repo = StickerRepository(runtime.sessions)
    [dog] = await repo.for_group(BOT_ID, GROUP)
    assert (dog.file_key, dog.seen_count, dog.status) == ("image:DOG.png", 2, "pending")
    assert await repo.count(BOT_ID, QUIET_GROUP) == 0


async def test_naming_job_is_scheduled(pallas: Pallas) -> None:
    from nonebot_plugin_apscheduler import scheduler

    await pallas.start()
    job = scheduler.get_job("pallas_sticker_describe")
    assert job is not None and job.max_instances == 1
    assert job.trigger.interval.total_seconds() == 600


async def test_sent_sticker_bytes_are_not_stored_with_the_message(app: App, pallas: Pallas) -> None:
    runtime = await pallas.start()
    image = MessageSegment("image", {"file": "base64://iVBORw0KGgo=", "sub_type": 1})
    async with app.test_api() as ctx:
        bot = onebot(ctx)
        ctx.should_call_api(
            "send_group_msg",
            {"group_id": GROUP, "message": Message(image)},
            {"message_id": -2_000_000_077},
        )
        await bot.send_group_msg(group_id=GROUP, message=Message(image))
    await runtime.writer.flush()
    stored = await runtime.repos.messages.find_by_message_ids(BOT_ID, GROUP, [-2_000_000_077])
    [segment] = stored[-2_000_000_077].segments
    assert segment["data"]["file"] == "base64://…"
