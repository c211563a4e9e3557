"""packages/feedback: an admin answers a bot line with 「不可以」 → outcome stored, line recalled,
and the chat does not answer that message."""

from __future__ import annotations

import time
from typing import Any

from nonebot.adapters.onebot.v11 import ActionFailed
from nonebug import App

from pallas.features.learning.feedback_repository import FeedbackRepository, StoredFeedback
from pallas.runtime import PallasRuntime
from tests.plugins.conftest import (
    BOT_ID,
    Pallas,
    arrive,
    at_bot,
    get_msg_result,
    group_message,
    onebot,
    quoting,
    routed_message_ids,
    text_message,
)

GROUP = 65_000_001
ALICE, ADMIN = 41_001, 41_900
BOT_LINE = -2_000_000_301  # the id the implementation gave the bot's reply


async def _outcomes(runtime: PallasRuntime, bot_message_id: int) -> list[StoredFeedback]:
    return await FeedbackRepository(runtime.sessions).for_group(
        BOT_ID, GROUP, bot_message_id=bot_message_id
    )


def _quote_resolves_to_bot_line(ctx: Any, text: str, *, time_: int | None = None) -> None:
    """The adapter looks the quoted message up (`get_msg`) before the matchers run."""
    ctx.should_call_api(
        "get_msg",
        {"message_id": BOT_LINE},
        get_msg_result(BOT_LINE, GROUP, BOT_ID, text, time_=time_),
    )


async def test_admin_no_on_a_bot_reply_is_recorded_recalled_and_not_answered(
    app: App, pallas: Pallas
) -> None:
    runtime = await pallas.start(llm=True)
    pallas.fake_llm.enqueue("周六下午三点集合")
    question = group_message(GROUP, ALICE, at_bot("集合时间是？"))
    no = group_message(GROUP, ADMIN, quoting(BOT_LINE, "不可以"), role="admin")
    async with app.test_matcher() as ctx:
        bot = onebot(ctx)
        ctx.receive_event(bot, await arrive(bot, question))
        ctx.should_call_api(
            "send_group_msg",
            {"group_id": GROUP, "message": text_message("周六下午三点集合")},
            {"message_id": BOT_LINE},
        )
    async with app.test_matcher() as ctx:
        bot = onebot(ctx)
        _quote_resolves_to_bot_line(ctx, "周六下午三点集合")
        ctx.receive_event(bot, await arrive(bot, no))
        ctx.should_call_api(  # may the bot recall? (a member: only within 2 minutes)
            "get_group_member_info",
            {"group_id": GROUP, "user_id": BOT_ID, "no_cache": True},
            {"group_id": GROUP, "user_id": BOT_ID, "role": "member"},
        )
        ctx.should_call_api("delete_msg", {"message_id": BOT_LINE}, None)

    [stored] = await _outcomes(runtime, BOT_LINE)
    outcome = stored.outcome
    assert (outcome.admin_id, outcome.word) == (ADMIN, "不可以")
    assert outcome.bot_text == "周六下午三点集合"
    assert outcome.undone_at is None
    snapshot = await runtime.repos.snapshots.by_bot_message(BOT_ID, GROUP, BOT_LINE)
    assert snapshot is not None and stored.turn_id == snapshot.turn_id  # blame the right turn
    # the chat routed the question, but never saw the 「不可以」
    assert await routed_message_ids(runtime, GROUP) == [question["message_id"]]
    assert len(pallas.fake_llm.chat_requests()) == 1


async def test_bot_line_missing_from_the_store_is_taken_from_the_adapters_reply(
    app: App, pallas: Pallas
) -> None:
    runtime = await pallas.start(llm=False)
    old = int(time.time()) - 600  # too old for a member to recall
    no = group_message(GROUP, ADMIN, quoting(BOT_LINE, "牛牛不可以！"), role="owner")
    async with app.test_matcher() as ctx:
        bot = onebot(ctx)
        _quote_resolves_to_bot_line(ctx, "乱说的", time_=old)
        ctx.receive_event(bot, await arrive(bot, no))
        ctx.should_call_api(
            "get_group_member_info",
            {"group_id": GROUP, "user_id": BOT_ID, "no_cache": True},
            {"group_id": GROUP, "user_id": BOT_ID, "role": "member"},
        )
        # no delete_msg: nonebug fails on an unexpected API call

    [stored] = await _outcomes(runtime, BOT_LINE)
    assert (stored.outcome.admin_id, stored.outcome.bot_text) == (ADMIN, "乱说的")
    assert stored.turn_id == ""  # no snapshot for a line the store never saw
    assert await routed_message_ids(runtime, GROUP) == []


async def test_quoted_line_the_implementation_cannot_fetch_is_found_in_the_store(
    app: App, pallas: Pallas
) -> None:
    runtime = await pallas.start(llm=False)
    no = group_message(GROUP, ADMIN, quoting(BOT_LINE, "不可以"), role="admin")
    async with app.test_matcher() as ctx:
        bot = onebot(ctx)
        ctx.should_call_api(  # the bot's line, recorded as it went out
            "send_group_msg",
            {"group_id": GROUP, "message": text_message("周六下午三点集合")},
            {"message_id": BOT_LINE},
        )
        await bot.send_group_msg(group_id=GROUP, message=text_message("周六下午三点集合"))
        ctx.should_call_api(  # e.g. NapCat has no cache entry: event.reply stays None
            "get_msg", {"message_id": BOT_LINE}, exception=ActionFailed(retcode=1404)
        )
        ctx.receive_event(bot, await arrive(bot, no))
        ctx.should_call_api(
            "get_group_member_info",
            {"group_id": GROUP, "user_id": BOT_ID, "no_cache": True},
            {"group_id": GROUP, "user_id": BOT_ID, "role": "admin"},
        )
        ctx.should_call_api("delete_msg", {"message_id": BOT_LINE}, None)

    [stored] = await _outcomes(runtime, BOT_LINE)
    assert (stored.outcome.admin_id, stored.outcome.bot_text) == (ADMIN, "周六下午三点集合")
    assert await routed_message_ids(runtime, GROUP) == []


async def test_plain_members_no_is_not_feedback_and_goes_on_to_the_chat(
    app: App, pallas: Pallas
) -> None:
    runtime = await pallas.start(llm=False)
    no = group_message(GROUP, ALICE, quoting(BOT_LINE, "不可以"))
    async with app.test_matcher() as ctx:
        bot = onebot(ctx)
        ctx.should_call_api(  # the bot's line, stored the way every bot send is (recorder)
            "send_group_msg",
            {"group_id": GROUP, "message": text_message("周六下午三点集合")},
            {"message_id": BOT_LINE},
        )
        await bot.send_group_msg(group_id=GROUP, message=text_message("周六下午三点集合"))
        _quote_resolves_to_bot_line(ctx, "周六下午三点集合")
        ctx.receive_event(bot, await arrive(bot, no))

    assert await _outcomes(runtime, BOT_LINE) == []
    assert await routed_message_ids(runtime, GROUP) == [no["message_id"]]


async def test_admin_reply_without_a_negative_word_is_left_to_the_chat(
    app: App, pallas: Pallas
) -> None:
    runtime = await pallas.start(llm=False)
    question = group_message(GROUP, ADMIN, quoting(BOT_LINE, "为什么不可以？"), role="admin")
    async with app.test_matcher() as ctx:
        bot = onebot(ctx)
        _quote_resolves_to_bot_line(ctx, "不行")
        ctx.receive_event(bot, await arrive(bot, question))

    assert await _outcomes(runtime, BOT_LINE) == []
    assert await routed_message_ids(runtime, GROUP) == [question["message_id"]]
